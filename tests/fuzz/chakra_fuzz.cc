// A Chakra execution trace of one rank: read, lowered and simulated.
#include "platforms/cluster.h"
#include "sim/config_node.h"
#include "sim/engine.h"
#include "strategies/builtins.h"
#include "strategies/simulate.h"
#include "tests/fuzz/fuzz_target.h"
#include "workloads/chakra/chakra_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dejavu;
  static const platforms::Cluster one = [] {
    sim::register_builtins();
    strategies::register_builtins();
    return platforms::load_cluster(ConfigNode::load_string(
        "servers:\n  - count: 1\n    gpu: H100-SXM-80GB\n    gpus_per_server: 1\n"
        "    intra: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}\n"
        "    nic: {bandwidth: 400 Gbps, latency: 2 us}\nnetwork: {kind: fat-tree, latency: 1 us}\n",
        "fuzz-platform.yaml"));
  }();
  const std::string path = fuzz::as_file(fuzz::text(data, size), ".0.et");
  return fuzz::accept_or_refuse([&] {
    workloads::ChakraTrace trace;
    trace.prefix = path.substr(0, path.size() - 5);
    trace.ranks.push_back(workloads::load_chakra_file(path));
    strategies::simulate_trace(trace, one, "analytic");
  });
}
