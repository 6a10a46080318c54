// Optimizer offload (ZeRO-Offload, ZeRO-Infinity): GPT-3 13B on one DGX A100 320GB does not
// fit with ZeRO-2 alone and fits with its optimizer on the host, at a step whose PCIe,
// host-memory and NVMe traffic are the hand-counted bytes (strategies/lowering/offload.h).
#include <gtest/gtest.h>

#include "tests/strategies/lowering/test_clusters.h"

#include <string>

#include "platforms/cluster.h"
#include "platforms/perf_model.h"
#include "sim/error.h"
#include "strategies/lowering.h"
#include "strategies/plan.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

struct Inputs {
  workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-13b.yaml"));
  platforms::Cluster cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-40gb-1x8.yaml"));
  Plan plan = load_plan_file(src("strategies/presets/dp8-zero2-offload.yaml"));
};

TEST(Offload, Gpt3_13BFitsOnOneServerOnlyWithItsOptimizerOnTheHost) {
  Inputs in;
  const double P = in.model.parameter_count(), shard = P / 8;  // ZeRO-2 over 8 GPUs
  const Simulation off = simulate(in.model, in.cluster, in.plan);
  Plan kept = in.plan;
  kept.offload_optimizer.clear();
  const Simulation on_gpu = simulate(in.model, in.cluster, kept);
  EXPECT_TRUE(on_gpu.report.oom);
  EXPECT_FALSE(off.report.oom);
  // Off the GPU: the fp32 states of its shard, 12 bytes a parameter.
  EXPECT_NEAR(on_gpu.report.peak_memory_bytes - off.report.peak_memory_bytes, 12 * shard, 1e-6 * P);
  const OffloadUse& o = off.report.offload;
  EXPECT_EQ(o.tier, "cpu");
  EXPECT_TRUE(o.fits());
  // Per GPU a step: its 16-bit gradients down and weights up over PCIe (2 + 2 bytes a
  // parameter of its shard); CPU Adam's 28 bytes a parameter of host memory traffic, the
  // server's 8 GPUs at once over 409.6 GB/s; held: 16 bytes a parameter per GPU's shard.
  EXPECT_DOUBLE_EQ(o.cost.pcie_bytes, 4 * shard);
  EXPECT_DOUBLE_EQ(o.cost.host_traffic_bytes, 28 * shard);
  EXPECT_DOUBLE_EQ(o.cost.host_held_bytes, 8 * 16 * shard);
  const double step = 4 * shard / 31.5e9 + 8 * 28 * shard / 409.6e9;
  EXPECT_NEAR(o.cost.seconds, step, 1e-12);
  // The step replaces the GPU's optimizer kernel (Adam's 38 bytes a parameter over HBM); the
  // copies are transfers on the GPU's PCIe link, the one down paying the GPU's 9.5 us step
  // latency as every transfer a GPU sends does (the CPU's is 0).
  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-40GB"));
  const double gpu_step = pm.time_s({sim::OpClass::Optimizer, 0, 38 * shard, sim::DType::BF16});
  EXPECT_NEAR(off.report.iteration_time_s - on_gpu.report.iteration_time_s, step + 9.5e-6 - gpu_step, 1e-9);
}

TEST(Offload, NvmeHoldsTheStatesAndStreamsThem) {
  Inputs in;
  in.plan.offload_optimizer = "nvme";
  const double shard = in.model.parameter_count() / 8;
  const OffloadUse o = simulate(in.model, in.cluster, in.plan).report.offload;
  EXPECT_DOUBLE_EQ(o.cost.nvme_held_bytes, 8 * 12 * shard);  // fp32 master, momentum, variance
  EXPECT_DOUBLE_EQ(o.cost.host_held_bytes, 8 * 4 * shard);   // the fp32 gradient
  EXPECT_DOUBLE_EQ(o.cost.nvme_traffic_bytes, 24 * shard);   // the states read and written back
  EXPECT_NEAR(o.cost.seconds, 4 * shard / 31.5e9 + 8 * 28 * shard / 409.6e9 + 8 * 24 * shard / 25e9, 1e-12);
  EXPECT_TRUE(o.fits());
}

// n layers in a chain, each of F forward FLOPs a sample (2 F backward), Q bf16 parameters and
// A bytes a sample kept for its backward.
workloads::ModelGraph layer_chain(int n, double F, double Q, double A) {
  workloads::ModelGraph model;
  model.name = "chain";
  model.layers = n;
  for (int l = 0; l < n; ++l) {
    workloads::Op op;
    op.name = "layer" + std::to_string(l);
    op.layer = l;
    op.fwd_flops = F, op.bwd_flops = 2 * F, op.params = Q, op.weight_bytes = 2 * Q, op.activation_bytes = A;
    const int v = model.add_op(op);
    if (l > 0) model.add_edge(v - 1, v);
  }
  return model;
}

// 4 layers of Q = 1e9 bf16 parameters (F forward FLOPs a sample), and two A100s on free
// links of 1000 GB/s with a host side: PCIe 1000 GB/s, CPU memory 400 GB/s.
workloads::ModelGraph four_layers(double F, double Q) { return layer_chain(4, F, Q, 0); }

platforms::Cluster two_gpus_with_host(double pcie_Bps = 1e12) {
  platforms::Cluster cluster;  // free_network(2, 1e12) with a host side
  platforms::ServerGroup server = free_network(2, 1e12).groups[0];
  server.host = {1e12, 400e9, pcie_Bps, 0, 0};
  cluster.groups = {server};
  platforms::build_network(cluster);
  return cluster;
}

TEST(Offload, BucketsCopyTheirGradientsDownUnderTheBackward) {
  // ZeRO-2 over dp 2 with the optimizer on the CPUs and a bucket per layer (2 GB): each
  // bucket's reduce-scatter (r = 1 GB / 1000 GB/s = 1 ms) and the copy of its 1 GB shard
  // down (h = 1 ms) run under the next layer's backward; only the last layer's are exposed:
  //   4f + 4b + r + h + Adam + the 4 GB shard back (4h) + the weights' all-gather (4 ms),
  // where Adam is 2 GPUs x 28 bytes x 2e9 parameters over 400 GB/s. Without buckets one
  // reduce-scatter and one copy of 4 GB follow the backward: 3r + 3h later.
  const double F = 4e12, Q = 1e9, r = 1e-3, h = 1e-3, a = 4e-3;
  const auto model = four_layers(F, Q);
  const auto cluster = two_gpus_with_host();
  Plan plan;
  plan.dp = 2;
  plan.global_batch_size = 2;
  plan.zero = 2;
  plan.offload_optimizer = "cpu";
  plan.data_parallel.bucket_bytes = 2 * Q;
  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
  const double f = pm.time_s({sim::OpClass::Gemm, F, 2 * Q, sim::DType::BF16});
  const double b = pm.time_s({sim::OpClass::Gemm, 2 * F, 4 * Q, sim::DType::BF16});
  const double adam = 2 * 28 * 2e9 / 400e9;
  ASSERT_GT(b, r + h);
  const Simulation bucketed = simulate(model, cluster, plan, "analytic-no-contention");
  EXPECT_NEAR(bucketed.result.makespan_s, 4 * f + 4 * b + r + h + adam + 4 * h + a, 1e-9);
  plan.data_parallel.bucket_bytes = 0;
  const Simulation whole = simulate(model, cluster, plan, "analytic-no-contention");
  EXPECT_NEAR(whole.result.makespan_s - bucketed.result.makespan_s, 3 * r + 3 * h, 1e-9);
}

TEST(Offload, ParametersComeInOverPcieBeforeEveryGather) {
  // 4 layers of Q = 1e9 bf16 parameters over dp 2 with ZeRO-3 (lower_test's case), the
  // weights' shards on the host: before each gather (g = 1 ms) every GPU copies its 1 GB
  // shard of the layer in over PCIe at 1000 GB/s (h = 1 ms), on the gather stream. One layer
  // of prefetch hides all but the first: h + g + 4f + 4b + g + step, one h more than with
  // the shards kept. A step copies 8 shards in (4 layers, forward and backward): 8 GB. The
  // GPU holds no shard (4 x 1 GB less) but each gathered layer whole (2 GB, not 1).
  const double F = 4e12, Q = 1e9, g = 1e-3, h = 1e-3;
  const auto model = four_layers(F, Q);
  const auto cluster = two_gpus_with_host();
  Plan plan;
  plan.dp = 2;
  plan.global_batch_size = 2;
  plan.zero = 3;
  const Simulation kept = simulate(model, cluster, plan, "analytic-no-contention");
  plan.offload_parameters = "cpu";
  const Simulation off = simulate(model, cluster, plan, "analytic-no-contention");
  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
  const double f = pm.time_s({sim::OpClass::Gemm, F, 2 * Q, sim::DType::BF16});
  const double b = pm.time_s({sim::OpClass::Gemm, 2 * F, 4 * Q, sim::DType::BF16});
  const double step = pm.time_s(
      {sim::OpClass::Optimizer, 0, 4 * Q / 2 * optimizer_bytes_per_param(sim::DType::BF16), sim::DType::BF16});
  ASSERT_GT(f, g + h);
  EXPECT_NEAR(off.result.makespan_s, h + g + 4 * f + 4 * b + g + step, 1e-9);
  EXPECT_NEAR(off.result.makespan_s - kept.result.makespan_s, h, 1e-9);
  EXPECT_DOUBLE_EQ(off.report.offload.parameter_pcie_bytes, 8e9);
  EXPECT_DOUBLE_EQ(off.report.offload.parameter_held_bytes, 2 * 4e9);  // two GPUs' 4 GB shards
  LowerOptions options;
  for (const char* tier : {"", "cpu"}) {
    plan.offload_parameters = tier;
    const LoweredJob job = lower(model, cluster, plan, options);
    double weights = 0;
    for (const sim::MemoryPart& part : job.graph.devices()[0].resident)
      if (part.name == "weights") weights += part.bytes;
    EXPECT_DOUBLE_EQ(weights, *tier ? 0 : 4e9) << tier;
    int gathers = 0, fetches = 0;
    for (const sim::Task& t : job.graph.tasks()) {
      const std::string& label = job.graph.labels().at(t.label);
      if (label == "zero-3 gather weights") {
        ++gathers;
        EXPECT_DOUBLE_EQ(t.alloc_bytes, *tier ? 2e9 : 1e9);
      }
      if (label == "zero-3 weights from CPU memory") {
        ++fetches;
        EXPECT_DOUBLE_EQ(t.bytes, 1e9);
      }
    }
    EXPECT_EQ(gathers, 8);
    EXPECT_EQ(fetches, *tier ? 8 : 0);
  }
}

TEST(Offload, ActivationsWaitInCpuMemoryBetweenForwardAndBackward) {
  // One stage, one layer keeping A = 1 GB a sample, GPipe over m = 4 microbatches on one of
  // two_gpus_with_host's GPUs (dp 2). Each forward's A goes down (h = 1 ms, under the next
  // forward f); the copy back of microbatch j's starts once the item two before its backward
  // ends, after every copy on the stream before it: backward 0 waits for the last copy
  // down and its own copy back (2h), the rest arrive under the backward before. Makespan
  // 4f + 2h + 4b + step, and at most 2 A held (not 4 A).
  const double F = 4e12, A = 1e9, h = 1e-3;
  workloads::ModelGraph model;
  model.name = "one";
  model.layers = 1;
  workloads::Op op;
  op.name = "layer0";
  op.fwd_flops = F, op.bwd_flops = 2 * F, op.activation_bytes = A;
  model.add_op(op);
  const auto cluster = two_gpus_with_host();
  Plan plan;
  plan.dp = 2;
  plan.global_batch_size = 8;
  plan.schedule = "gpipe";
  const Simulation kept = simulate(model, cluster, plan, "analytic-no-contention");
  plan.offload_activations = "cpu";
  const Simulation off = simulate(model, cluster, plan, "analytic-no-contention");
  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
  const double f = pm.time_s({sim::OpClass::Gemm, F, 0, sim::DType::BF16});
  const double b = pm.time_s({sim::OpClass::Gemm, 2 * F, 0, sim::DType::BF16});
  ASSERT_GT(f, h);
  EXPECT_NEAR(off.result.makespan_s - kept.result.makespan_s, 2 * h, 1e-9);
  const double step = pm.time_s({sim::OpClass::Optimizer, 0, 0, sim::DType::BF16});
  EXPECT_NEAR(off.result.makespan_s, 4 * f + 2 * h + 4 * b + step, 1e-9);
  EXPECT_NEAR(kept.report.peak_memory_bytes - off.report.peak_memory_bytes, 2 * A, 1e-3);
  EXPECT_DOUBLE_EQ(off.report.offload.activation_pcie_bytes, 2 * 4 * A);
  // The host holds every forward's A until its backward: 4 A a GPU, 8 A for the server's two.
  EXPECT_DOUBLE_EQ(off.report.offload.activation_held_bytes, 2 * 4 * A);
  EXPECT_TRUE(off.report.offload.fits());
}

TEST(Offload, TheServerHoldsWhatEachStageHasInFlight) {
  // Two layers keeping A = 1 GB a sample, pp 2 (a layer a stage) on two_gpus_with_host's
  // server, 1F1B over m = 4: stage 0 runs F0 F1 B0 F2 B1 F3 B2 B3, so two items wait in CPU
  // memory at once; stage 1 runs F0 B0 F1 B1 ..., one. The server holds 3 A: with 2.5 GB of
  // CPU memory the plan does not fit, with 3 GB it does.
  const double A = 1e9;
  const workloads::ModelGraph model = layer_chain(2, 4e12, 0, A);
  auto cluster = two_gpus_with_host();
  Plan plan;
  plan.pp = 2;
  plan.global_batch_size = 4;
  plan.offload_activations = "cpu";
  for (const double memory : {3e9, 2.5e9}) {
    cluster.groups[0].host.memory_bytes = memory;
    const OffloadUse o = simulate(model, cluster, plan, "analytic-no-contention").report.offload;
    EXPECT_DOUBLE_EQ(o.activation_held_bytes, 3 * A);
    EXPECT_EQ(o.fits(), memory >= 3 * A) << memory;
  }
}

// Four layers keeping A = 1 GB a sample each (F forward FLOPs); one microbatch a replica.
struct FourLayers {
  workloads::ModelGraph model;
  Plan plan;
  explicit FourLayers(double F, double A) : model(layer_chain(4, F, 0, A)) {
    plan.dp = 2;
    plan.global_batch_size = 2;
  }
  // The plan as it is, then with the first `layers` layers' activations offloaded.
  std::pair<Simulation, Simulation> kept_and_offloaded(const platforms::Cluster& cluster, int layers) const {
    Plan off = plan;
    off.offload_activations = "cpu";
    off.offload_activation_layers = layers;
    return {simulate(model, cluster, plan, "analytic-no-contention"),
            simulate(model, cluster, off, "analytic-no-contention")};
  }
};

TEST(Offload, LayersGoDownUnderTheNextLayersAndComeBackAhead) {
  // offload: {activations: cpu, layers: 2} of L = 4 (Transformer Engine's synchronizer): layer
  // i's copy down (h = 1 GB / 1000 GB/s = 1 ms) runs under layer i + 1 and must be done before
  // layer L - N + i = 2 + i; its copy back starts as the backward of layer L - 1 - N + i = 1 + i
  // starts and is done before layer i's backward. With f, b > h nothing waits: the same
  // step, 2 A fewer bytes at the forward's end (layers 0 and 1 on the host), 2 x 2 A moved.
  const double F = 4e12, A = 1e9, h = 1e-3;
  const auto [kept, off] = FourLayers(F, A).kept_and_offloaded(two_gpus_with_host(1e12), 2);
  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
  ASSERT_GT(pm.time_s({sim::OpClass::Gemm, F, 0, sim::DType::BF16}), h);
  EXPECT_NEAR(off.result.makespan_s, kept.result.makespan_s, 1e-12);
  EXPECT_NEAR(kept.report.peak_memory_bytes - off.report.peak_memory_bytes, 2 * A, 1e-3);
  EXPECT_DOUBLE_EQ(off.report.offload.activation_pcie_bytes, 2 * 2 * A);
  EXPECT_EQ(off.report.offload.activation_layers, 2);
  EXPECT_DOUBLE_EQ(off.report.offload.activation_held_bytes, 2 * 2 * A);  // 2 layers a GPU, 2 GPUs
}

TEST(Offload, ASlowHostLinkStallsTheLayersThatWaitForIt) {
  // The same with h = 1 GB / 25 GB/s = 40 ms > b > f. Forward: copies 0 and 1 run back to back
  // from f; layer 2 starts at f + h, layer 3 (after copy 1) at f + 2h: the forward ends at
  // 2f + 2h. Backward from t0 = 2f + 2h + b (layer 3 done): copy back 1 over [t0, t0 + h];
  // copy back 0 after it, over [t0 + h, t0 + 2h]; layer 1 runs from t0 + h, layer 0 from
  // t0 + 2h: the step is 2f + 4h + 2b against 4f + 4b, so 4h - 2f - 2b longer.
  const double F = 4e12, A = 1e9, h = 40e-3;
  const auto [kept, off] = FourLayers(F, A).kept_and_offloaded(two_gpus_with_host(25e9), 2);
  const platforms::PerfModel pm(platforms::gpu_spec("A100-SXM-80GB"));
  const double f = pm.time_s({sim::OpClass::Gemm, F, 0, sim::DType::BF16});
  const double b = pm.time_s({sim::OpClass::Gemm, 2 * F, 0, sim::DType::BF16});
  ASSERT_GT(h, b);
  ASSERT_GT(b, f);
  EXPECT_NEAR(off.result.makespan_s - kept.result.makespan_s, 4 * h - 2 * f - 2 * b, 1e-9);
}

TEST(Offload, APlatformWithoutAHostSideIsRefused) {
  Inputs in;
  const auto plain = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  try {
    simulate(in.model, plain, in.plan);
    FAIL() << "offload without a host side was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dp8-zero2-offload.yaml:9:10: offload: optimizer: cpu needs each server's "
                                         "host: {memory, memory_bandwidth, pcie} in platform dgx-a100-1x8"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dejavu::strategies
