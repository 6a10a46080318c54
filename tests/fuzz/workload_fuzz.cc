// A workload YAML: every generator, and the operator graph it builds.
#include "sim/config_node.h"
#include "tests/fuzz/fuzz_target.h"
#include "workloads/generator.h"
#include "workloads/inspect.h"

#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool registered = (dejavu::workloads::register_builtins(), true);
  (void)registered;
  return dejavu::fuzz::accept_or_refuse([&] {
    const auto model =
        dejavu::workloads::load_workload(dejavu::ConfigNode::load_string(dejavu::fuzz::text(data, size), "fuzz.yaml"));
    std::ostringstream out;
    dejavu::workloads::write_inspection(out, model, 8);
  });
}
