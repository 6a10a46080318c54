// A platform YAML: parsed, checked and built into a network.
#include "platforms/cluster.h"
#include "sim/config_node.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dejavu::fuzz::accept_or_refuse([&] {
    dejavu::platforms::load_cluster(dejavu::ConfigNode::load_string(dejavu::fuzz::text(data, size), "fuzz.yaml"));
  });
}
