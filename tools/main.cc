// The `dejavu` command line: parse, run the one subcommand given (tools/commands/), and
// turn every error into one line on stderr with exit code 2.
#include <iostream>
#include <map>
#include <memory>
#include <new>

#include <CLI/CLI.hpp>

#include "sim/engine.h"
#include "strategies/builtins.h"
#include "strategies/cluster/placement.h"
#include "strategies/search/searcher.h"
#include "strategies/training/builtins.h"
#include "tools/commands/command.h"
#include "tools/one_line.h"
#include "workloads/generator.h"

int main(int argc, char** argv) {
  using namespace dejavu;
  sim::register_builtins();
  workloads::register_builtins();
  strategies::register_builtins();
  strategies::search::register_searchers();
  strategies::register_training();
  strategies::cluster::register_placement_policies();
  tools::register_commands();

  CLI::App app{"dejavu: a discrete-event simulator of distributed deep-learning training"};
  app.require_subcommand(1);
  std::map<CLI::App*, std::unique_ptr<tools::Command>> commands;
  for (const auto& [name, entry] : tools::commands().entries()) {
    CLI::App* sub = app.add_subcommand(name, entry.description);
    auto command = entry.make();
    command->add_options(*sub);
    commands.emplace(sub, std::move(command));
  }
  try {
    if (const std::string unknown = tools::unknown_command(argc, argv, tools::commands().names()); !unknown.empty()) {
      std::cerr << unknown << "\n";
      return 2;
    }
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << tools::one_line("dejavu: " + std::string(e.what()) + " (see dejavu --help)") << "\n";
    return 2;
  }
  for (auto& [sub, command] : commands) {
    if (!sub->parsed()) continue;
    try {
      return command->run();
    } catch (const Error& e) {
      std::cerr << tools::one_line(e.what()) << "\n";
      return 2;
    } catch (const std::bad_alloc&) {
      std::cerr << "dejavu: out of memory: the input asks for more than this machine holds\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << tools::one_line("dejavu: internal error: " + std::string(e.what())) << "\n";
      return 1;
    }
  }
  return 0;
}
