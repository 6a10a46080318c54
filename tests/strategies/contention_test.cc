// The contention suite (issue 21): data-parallel sync topologies whose transfers meet on
// shared NICs, on eight one-GPU A100 servers with a 100 Gb/s NIC each, GPT-3 1.3B, dp8;
// and two servers of two GPUs sharing one NIC. The analytic engine must agree with
// SimGrid's flow-level model within 5%; priced alone (analytic-no-contention) it does not
// where transfers meet. Hand-worked: one parameter server's NIC carries 7 pushes in, then
// 7 pulls out, each the whole gradient.
#include <gtest/gtest.h>

#include "platforms/cluster.h"
#include "strategies/plan.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"

namespace dejavu::strategies {
namespace {

std::string src(const std::string& rel) { return std::string(DEJAVU_SOURCE_DIR) + "/" + rel; }

platforms::Cluster servers(int count, int gpus, bool per_gpu) {
  return platforms::load_cluster(ConfigNode::load_string(
      "servers:\n  - count: " + std::to_string(count) +
          "\n    gpu: A100-SXM-80GB\n    gpus_per_server: " + std::to_string(gpus) +
          "\n    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us, efficiency: 0.759}\n"
          "    step_latency: 9.5 us\n    nic: {bandwidth: 100 Gbps, latency: 2 us, per_gpu: " +
          (per_gpu ? "true" : "false") + "}\nnetwork: {kind: fat-tree, latency: 1 us, oversubscription: 1}\n",
      "contention.yaml"));
}

struct Times {
  double simgrid, analytic, alone;
};

Times times(const platforms::Cluster& cluster, const std::string& plan_yaml) {
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  const Plan plan = load_plan(ConfigNode::load_string(plan_yaml, "plan.yaml"));
  sim::EngineOptions flow;
  flow.fidelity = "flow";
  flow.timeout_s = 300;
  return {simulate(model, cluster, plan, "simgrid", flow).report.iteration_time_s,
          simulate(model, cluster, plan, "analytic").report.iteration_time_s,
          simulate(model, cluster, plan, "analytic-no-contention").report.iteration_time_s};
}

std::string dp8(const std::string& sync) {
  return "dp: 8\nmicro_batch_size: 1\nglobal_batch_size: 32\ndata_parallel: {" + sync + "}\n";
}

TEST(Contention, SyncTopologiesAgreeWithSimGrid) {
  const platforms::Cluster cluster = servers(8, 1, true);
  for (const char* sync : {"sync: parameter-server, servers: 1", "sync: parameter-server, servers: 4",
                           "sync: rolling-parameter-server", "sync: gossip, peers: 1, seed: 7",
                           "sync: gossip, peers: 2, seed: 7", "sync: gossip, peers: 7, seed: 7", "sync: all-reduce"}) {
    SCOPED_TRACE(sync);
    const Times t = times(cluster, dp8(sync));
    EXPECT_NEAR(t.analytic, t.simgrid, 0.05 * t.simgrid);
  }
}

TEST(Contention, OneParameterServersNicCarriesEveryPushThenEveryPull) {
  // Priced alone, 7 pushes cost one and 7 pulls one; shared, the server's 12.5 GB/s NIC
  // carries 6 more of each, 2 bytes of gradient per parameter, all on the critical path.
  const Times ps = times(servers(8, 1, true), dp8("sync: parameter-server, servers: 1"));
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  const double queued = 2 * 6 * (2 * model.parameter_count()) / 12.5e9;
  EXPECT_NEAR(ps.analytic - ps.alone, queued, 1e-3 * queued);
}

TEST(Contention, TwoGroupsOnASharedNicAgreeWithSimGrid) {
  const Times t = times(servers(2, 2, false), "tp: 2\ndp: 2\nmicro_batch_size: 1\nglobal_batch_size: 32\n");
  EXPECT_NEAR(t.analytic, t.simgrid, 0.05 * t.simgrid);
  EXPECT_GT(t.simgrid - t.alone, 0.05 * t.simgrid);  // the case contends
}

}  // namespace
}  // namespace dejavu::strategies
