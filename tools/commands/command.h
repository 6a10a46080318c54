// A subcommand of `dejavu`: the options it takes and what it runs. Each lives in its own
// file in this folder and is one entry of commands(), filled by register_commands();
// tools/main.cc only parses the command line and runs the one given.
#pragma once

#include <CLI/CLI.hpp>

#include "sim/registry.h"

namespace dejavu::tools {

class Command {
 public:
  virtual ~Command() = default;
  virtual void add_options(CLI::App& cmd) = 0;
  // Runs after parsing; returns the exit code. Errors are thrown (dejavu::Error: exit 2).
  virtual int run() = 0;
};

Registry<Command>& commands();
void register_commands();

}  // namespace dejavu::tools
