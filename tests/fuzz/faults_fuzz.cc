// A fault scenario YAML against a small cluster, turned into the engines' faults and
// simulated with the analytic engine.
#include "platforms/cluster.h"
#include "sim/config_node.h"
#include "sim/engine.h"
#include "strategies/builtins.h"
#include "strategies/faults.h"
#include "strategies/simulate.h"
#include "tests/fuzz/fuzz_target.h"
#include "workloads/generator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dejavu;
  static const auto setup = [] {
    sim::register_builtins();
    workloads::register_builtins();
    strategies::register_builtins();
    return std::make_pair(
        platforms::load_cluster(ConfigNode::load_string(
            "servers:\n  - count: 2\n    gpu: A100-SXM-80GB\n    gpus_per_server: 2\n"
            "    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us}\n"
            "    nic: {bandwidth: 200 Gbps, latency: 2 us}\nnetwork: {kind: fat-tree, latency: 1 us}\n",
            "fuzz-platform.yaml")),
        workloads::load_workload(ConfigNode::load_string(
            "kind: transformer\nlayers: 2\nhidden: 128\nheads: 4\nseq_len: 64\nvocab: 500\n", "fuzz-workload.yaml")));
  }();
  return fuzz::accept_or_refuse([&] {
    const auto scenario =
        strategies::load_fault_scenario(ConfigNode::load_string(fuzz::text(data, size), "fuzz.yaml"), setup.first);
    strategies::Plan plan;
    plan.pp = 2;
    plan.dp = 2;
    plan.global_batch_size = 4;
    strategies::simulate_with_faults(setup.second, setup.first, plan, scenario, "analytic");
  });
}
