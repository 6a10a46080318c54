// The engines on whole training iterations: they agree where nothing contends, and the
// analytic engine shares links as SimGrid does where transfers contend (contention_test.cc).
#include <gtest/gtest.h>

#include "strategies/simulate.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

sim::EngineOptions flow() {
  sim::EngineOptions o;
  o.fidelity = "flow";
  o.timeout_s = 300;
  return o;
}

TEST(Engines, SimGridAgreesWithAnalyticWhereNothingContends) {
  struct Case {
    const char *platform, *workload, *plan;
    int global_batch;  // smaller than the preset's, to keep the suite fast
  } cases[] = {
      {"single-a100", "gpt3-1.3b", "single-gpu", 4},
      {"dgx-a100-4x8", "gpt3-13b", "tp8-pp4-gpipe", 16},
      {"pcie-l4-2x4", "gpt3-1.3b", "dp8-pcie", 16},
  };
  for (const Case& c : cases) {
    const auto model = workloads::load_workload_file(src("workloads/presets/" + std::string(c.workload) + ".yaml"));
    const auto cluster = platforms::load_cluster_file(src("platforms/presets/" + std::string(c.platform) + ".yaml"));
    Plan plan = load_plan_file(src("strategies/presets/" + std::string(c.plan) + ".yaml"));
    plan.global_batch_size = c.global_batch;
    const double analytic = simulate(model, cluster, plan, "analytic").report.iteration_time_s;
    for (const char* fidelity : {"closed", "flow", "step"}) {
      sim::EngineOptions o = flow();
      o.fidelity = fidelity;
      const double simgrid = simulate(model, cluster, plan, "simgrid", o).report.iteration_time_s;
      EXPECT_NEAR(simgrid / analytic, 1.0, 1e-3) << c.plan << " " << fidelity;
    }
  }
}

TEST(Engines, SendsThroughAnOversubscribedUplinkShareIt) {
  // The mixed preset: stage 0 on the A100 server, stage 1 on the H100 server, 2:1
  // oversubscribed. Each activation send stands for 8 flows (4 tensor ranks x 2 replicas),
  // each behind its own 25 GB/s NIC; the A100 server's uplink carries 8 x 25 / 2 = 100
  // GB/s, so each flow gets 12.5 GB/s on SimGrid and on the analytic engine, half of what
  // it gets priced alone. The first microbatch's send meets no other traffic.
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-13b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/mixed-a100-h100-2x8.yaml"));
  Plan plan = load_plan_file(src("strategies/presets/tp4-pp2-dp2-1f1b.yaml"));
  plan.global_batch_size = 16;
  const Simulation a = simulate(model, cluster, plan, "analytic");
  const Simulation alone = simulate(model, cluster, plan, "analytic-no-contention");
  const Simulation s = simulate(model, cluster, plan, "simgrid", flow());
  const double S = model.boundary_bytes_per_sample * plan.micro_batch_size;
  const double latency = 2e-6 + 1e-6 + 9.5e-6;  // nic + network + the A100 sender's step latency
  bool found = false;
  for (size_t i = 0; i < a.job.graph.size() && !found; ++i) {
    const sim::Task& t = a.job.graph.task(static_cast<sim::TaskId>(i));
    if (t.kind != sim::TaskKind::Transfer || a.job.graph.labels()[t.label] != "send activations to next stage")
      continue;
    found = true;
    EXPECT_EQ(a.job.graph.comm_set(t.comm_set).groups.size(), 8u);
    EXPECT_NEAR(alone.result.end_s[i] - alone.result.start_s[i], latency + S / 25e9, 1e-9);
    EXPECT_NEAR(a.result.end_s[i] - a.result.start_s[i], latency + S / 12.5e9, 1e-9);
    EXPECT_NEAR(s.result.end_s[i] - s.result.start_s[i], latency + S / 12.5e9, 1e-9);
  }
  EXPECT_TRUE(found);
}

TEST(Engines, SequenceParallelStagesSendATensorRanksShareOfTheTokens) {
  // Megatron-Core's pipeline tensor is [s / tp, b, h] under sequence parallelism (each tensor
  // rank holds s / tp of the tokens between layers), [s, b, h] without. GPT-3 13B, 2048
  // tokens of 5120 bf16 values: 20.97 MB a sample; tp 4 over the mixed preset's 25 GB/s
  // NICs, each flow alone on its path (analytic-no-contention); a send costs the NIC's and
  // network's latency and its sender's NCCL step latency (9.5 us A100 forward, 3.3 us H100
  // backward).
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-13b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/mixed-a100-h100-2x8.yaml"));
  Plan plan = load_plan_file(src("strategies/presets/tp4-pp2-dp2-1f1b.yaml"));
  plan.global_batch_size = 16;
  const double sample = 2048.0 * 5120 * 2;
  for (const bool sp : {false, true}) {
    plan.sequence_parallel = sp;
    const Simulation alone = simulate(model, cluster, plan, "analytic-no-contention");
    int sends = 0;
    for (size_t i = 0; i < alone.job.graph.size(); ++i) {
      const sim::Task& t = alone.job.graph.task(static_cast<sim::TaskId>(i));
      const std::string& label = alone.job.graph.labels()[t.label];
      if (t.kind != sim::TaskKind::Transfer || label.rfind("send ", 0) != 0) continue;
      ++sends;
      const double latency = 2e-6 + 1e-6 + (label == "send activations to next stage" ? 9.5e-6 : 3.3e-6);
      EXPECT_NEAR(alone.result.end_s[i] - alone.result.start_s[i], latency + sample / (sp ? 4 : 1) / 25e9, 1e-9)
          << label;
    }
    EXPECT_EQ(sends, 2 * plan.microbatches()) << sp;  // each microbatch's activation and its gradient
  }
}

TEST(Engines, PipelinesSharingOneNicAreSlowerByTheSharedBandwidth) {
  // Two PCIe servers with one shared 100 Gb/s NIC each; stage 0 on one server, stage 1 on
  // the other, four replicas: four activation sends cross each NIC at once.
  const auto cluster = platforms::load_cluster(ConfigNode::load_string(R"(
servers:
  - count: 2
    gpu: A100-SXM-80GB
    gpus_per_server: 4
    intra: {kind: pcie, bandwidth: 32 GB/s, latency: 2 us}
    nic: {bandwidth: 100 Gbps, latency: 2 us, per_gpu: false}
network: {kind: fat-tree, latency: 1 us}
)",
                                                                       "shared-nic.yaml"));
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  Plan plan;
  plan.pp = 2;
  plan.dp = 4;
  plan.global_batch_size = 16;
  const Simulation a = simulate(model, cluster, plan, "analytic");
  const Simulation alone = simulate(model, cluster, plan, "analytic-no-contention");
  const Simulation s = simulate(model, cluster, plan, "simgrid", flow());
  const double S = model.boundary_bytes_per_sample, nic = 12.5e9;
  const double latency = 2e-6 + 2e-6 + 1e-6;  // pcie + nic + network
  int sends = 0;
  for (size_t i = 0; i < a.job.graph.size(); ++i) {
    const sim::Task& t = a.job.graph.task(static_cast<sim::TaskId>(i));
    if (t.kind != sim::TaskKind::Transfer || a.job.graph.labels()[t.label] != "send activations to next stage")
      continue;
    ++sends;
    EXPECT_NEAR(alone.result.end_s[i] - alone.result.start_s[i], latency + S / nic, 1e-9);
    EXPECT_NEAR(a.result.end_s[i] - a.result.start_s[i], latency + 4 * S / nic, 1e-9);
    EXPECT_NEAR(s.result.end_s[i] - s.result.start_s[i], latency + 4 * S / nic, 1e-9);
  }
  EXPECT_EQ(sends, plan.microbatches());
  EXPECT_GT(s.report.iteration_time_s, alone.report.iteration_time_s);
  EXPECT_NEAR(a.report.iteration_time_s, s.report.iteration_time_s, 1e-3 * s.report.iteration_time_s);
}

}  // namespace
}  // namespace dejavu::strategies
