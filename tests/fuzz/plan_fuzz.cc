// A plan YAML, then the whole way through on a small model and cluster: checked against
// them, lowered and simulated on the analytic engine.
#include "platforms/cluster.h"
#include "sim/config_node.h"
#include "sim/engine.h"
#include "strategies/builtins.h"
#include "strategies/simulate.h"
#include "tests/fuzz/fuzz_target.h"
#include "workloads/generator.h"

namespace {
struct World {
  dejavu::platforms::Cluster cluster;
  dejavu::workloads::ModelGraph model;
};
const World& world() {
  static const World w = [] {
    dejavu::sim::register_builtins();
    dejavu::workloads::register_builtins();
    dejavu::strategies::register_builtins();
    World x;
    x.cluster = dejavu::platforms::load_cluster(dejavu::ConfigNode::load_string(
        "servers:\n  - count: 2\n    gpu: A100-SXM-80GB\n    gpus_per_server: 4\n"
        "    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us}\n"
        "    nic: {bandwidth: 200 Gbps, latency: 2 us}\nnetwork: {kind: fat-tree, latency: 1 us}\n",
        "fuzz-platform.yaml"));
    x.model = dejavu::workloads::load_workload(dejavu::ConfigNode::load_string(
        "kind: llama\nlayers: 4\nhidden: 256\nheads: 8\nkv_heads: 4\nffn_hidden: 512\nseq_len: 128\nvocab: 1000\n"
        "experts: 4\ntop_k: 2\n",
        "fuzz-workload.yaml"));
    return x;
  }();
  return w;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const World& w = world();
  return dejavu::fuzz::accept_or_refuse([&] {
    const auto plan =
        dejavu::strategies::load_plan(dejavu::ConfigNode::load_string(dejavu::fuzz::text(data, size), "fuzz.yaml"));
    dejavu::strategies::simulate(w.model, w.cluster, plan, "analytic");
  });
}
