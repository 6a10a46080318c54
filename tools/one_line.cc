#include "tools/one_line.h"

#include <algorithm>
#include <cstdio>

namespace dejavu::tools {

std::string one_line(const std::string& text) {
  std::string out;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

namespace {
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string unknown_command(int argc, char** argv, const std::vector<std::string>& commands) {
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string given = argv[1];
  if (std::find(commands.begin(), commands.end(), given) != commands.end()) return "";
  std::string nearest;
  size_t best = given.size();
  for (const std::string& c : commands)
    if (const size_t d = edit_distance(given, c); d < best) {
      best = d;
      nearest = c;
    }
  std::string line = "dejavu: unknown command \"" + one_line(given.substr(0, 40)) + "\"";
  if (!nearest.empty() && best <= 3) line += "; did you mean " + nearest + "?";
  return line + " (see dejavu --help)";
}

}  // namespace dejavu::tools
