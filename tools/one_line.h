// Messages for the terminal: every error is one line, and a mistyped command gets the
// nearest one suggested.
#pragma once

#include <string>
#include <vector>

namespace dejavu::tools {

// `text` with control characters (newlines, NUL, escapes) shown as \n, \x00, ...
std::string one_line(const std::string& text);

// "" when argv names a known command (or none, or an option); else the line to print:
// the unknown command, the nearest known one, and where to look.
std::string unknown_command(int argc, char** argv, const std::vector<std::string>& commands);

}  // namespace dejavu::tools
