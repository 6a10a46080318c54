// `dejavu inspect`: a workload's parameters, FLOPs and memory, and its graph as DOT.
#include <iostream>

#include "sim/limits.h"
#include "tools/commands/command.h"
#include "tools/commands/options.h"
#include "tools/output_file.h"
#include "workloads/generator.h"
#include "workloads/inspect.h"

namespace dejavu::tools {

namespace {

class InspectCommand : public Command {
 public:
  void add_options(CLI::App& cmd) override {
    cmd.add_option("workload", input_, "workload YAML")->required();
    cmd.add_option("--batch", batch_, "samples per iteration, for the FLOP count")
        ->check(number_in(1, static_cast<double>(limits::kMaxBatch)));
    cmd.add_option("--dot", dot_, "also write the operator graph as Graphviz DOT");
  }

  int run() override {
    OutputSet out;
    out.add("--dot", dot_);
    const workloads::ModelGraph model = workloads::load_workload_file(input_);
    if (!dot_.empty()) out.write(dot_, [&](std::ostream& o) { workloads::write_dot(o, model); });
    out.commit();
    workloads::write_inspection(std::cout, model, batch_);
    return 0;
  }

 private:
  std::string input_, dot_;
  double batch_ = 1;
};

}  // namespace

std::unique_ptr<Command> make_inspect_command() { return std::make_unique<InspectCommand>(); }

}  // namespace dejavu::tools
