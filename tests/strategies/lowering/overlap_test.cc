// Megatron-Core's overlap switches (strategies/plan.h): the rules its arguments.py asserts,
// its default bucket, and what each hides, on runs where the answer can be reasoned out.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/config_node.h"
#include "sim/error.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

Plan plan_of(const std::string& yaml) { return load_plan(ConfigNode::load_string(yaml, "plan.yaml")); }

std::string error_of(const std::string& yaml) {
  try {
    plan_of(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MegatronSwitches, RefusedWhereMegatronCoreRefusesThem) {
  EXPECT_NE(error_of("tp: 2\nglobal_batch_size: 1\ntp_comm_overlap: true\n")
                .find("plan.yaml:3:18: tp_comm_overlap: overlaps the all-gathers "
                      "and reduce-scatters of sequence parallelism"),
            std::string::npos);
  EXPECT_NE(error_of("dp: 2\nglobal_batch_size: 2\noverlap_param_gather: true\noverlap_grad_reduce: true\n")
                .find("needs distributed_optimizer"),
            std::string::npos);
  EXPECT_NE(error_of("dp: 2\nglobal_batch_size: 2\ndistributed_optimizer: true\noverlap_param_gather: true\n")
                .find("overlap_grad_reduce: true"),
            std::string::npos);
  EXPECT_NE(error_of("global_batch_size: 1\nzero: 0\ndistributed_optimizer: true\n")
                .find("zero: 0 contradicts distributed_optimizer"),
            std::string::npos);
  EXPECT_NE(
      error_of("global_batch_size: 1\nzero: 3\noverlap_grad_reduce: true\n").find("zero: 3 reduce-scatters each layer"),
      std::string::npos);
  EXPECT_EQ(plan_of("global_batch_size: 1\ndistributed_optimizer: true\n").zero, 1);
}

TEST(MegatronSwitches, GradientBucketsDefaultToMegatronCoresSize) {
  // DistributedDataParallelConfig: max(40,000,000, 1,000,000 x dp) parameters a bucket.
  EXPECT_EQ(plan_of("dp: 8\nglobal_batch_size: 8\noverlap_grad_reduce: true\n").gradient_bucket_bytes(2), 40e6 * 2);
  EXPECT_EQ(plan_of("dp: 64\nglobal_batch_size: 64\noverlap_grad_reduce: true\n").gradient_bucket_bytes(2), 64e6 * 2);
  EXPECT_EQ(plan_of("dp: 8\nglobal_batch_size: 8\n").gradient_bucket_bytes(2), 0);
  EXPECT_EQ(plan_of("dp: 8\nglobal_batch_size: 8\ndata_parallel: {bucket: 25 MB}\noverlap_grad_reduce: true\n")
                .gradient_bucket_bytes(2),
            25e6);
}

struct Gpt3OnOneServer : ::testing::Test {
  workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  platforms::Cluster cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  // Communication kernels leave compute every SM (comm_sms 0): the closed forms below.
  Plan base() const { return plan_of("dp: 8\nglobal_batch_size: 16\ndistributed_optimizer: true\ncomm_sms: 0\n"); }
  static std::vector<sim::TaskId> labelled(const Simulation& s, const std::string& text) {
    std::vector<sim::TaskId> out;
    for (size_t i = 0; i < s.job.graph.size(); ++i) {
      const sim::Task& t = s.job.graph.task(static_cast<sim::TaskId>(i));
      if (t.label >= 0 && s.job.graph.labels()[t.label] == text) out.push_back(static_cast<sim::TaskId>(i));
    }
    return out;
  }
};

TEST_F(Gpt3OnOneServer, OverlappedGradientsReduceLayerByLayerUnderTheBackward) {
  // GPT-3 1.3B: a layer holds 12·2048² = 50.3M parameters, above the 40M bucket, the
  // embedding 103M: a bucket each, but for the last layer, which takes the final norm (4K)
  // that the backward meets first: 24 layers + the embedding = 25 reduce-scatters.
  Plan plan = base();
  const Simulation plain = simulate(model, cluster, plan);
  plan.overlap_grad_reduce = true;
  const Simulation overlapped = simulate(model, cluster, plan);
  EXPECT_EQ(labelled(overlapped, "dp gradient bucket").size(), 25u);
  EXPECT_EQ(labelled(plain, "dp gradient bucket").size(), 0u);
  // All but the last bucket run under the backward of the layers below it.
  EXPECT_LT(overlapped.report.iteration_time_s, plain.report.iteration_time_s);
}

TEST_F(Gpt3OnOneServer, OverlappedWeightGathersHideAllButTheFirstBuckets) {
  // Without the switch, the distributed optimizer all-gathers every weight after its step
  // (exposed); with it, bucket by bucket under the forward, each bucket's gather dispatched
  // when the forward reaches the bucket before. The first bucket (the embedding) waits for
  // its gather; the second's (layer 0) runs under the embedding's short forward and shows
  // but for it; every later one runs under a layer's forward, longer than a gather.
  Plan plan = base();
  plan.overlap_grad_reduce = true;
  const Simulation after = simulate(model, cluster, plan);
  plan.overlap_param_gather = true;
  const Simulation under = simulate(model, cluster, plan);
  const auto whole = labelled(after, "dp weight all-gather"), buckets = labelled(under,
                                                                                 "dp weight all-gather (under "
                                                                                 "the forward)");
  ASSERT_EQ(whole.size(), 1u);
  ASSERT_EQ(buckets.size(), 25u);
  auto d = [](const Simulation& s, sim::TaskId id) { return s.result.end_s[id] - s.result.start_s[id]; };
  const auto embedding = labelled(under, "fwd embedding");
  ASSERT_FALSE(embedding.empty());
  const double shown = d(under, buckets[0]) + d(under, buckets[1]) - d(under, embedding.front());
  EXPECT_NEAR(after.report.iteration_time_s - under.report.iteration_time_s, d(after, whole[0]) - shown,
              1e-3 * d(after, whole[0]));
  // The report says so: the gathers ran on their own stream, hidden but for that.
  const auto it = std::find_if(under.report.communication.begin(), under.report.communication.end(),
                               [](const StreamCommReport& c) { return c.stream == "param-gather"; });
  ASSERT_NE(it, under.report.communication.end());
  EXPECT_NEAR(it->busy_s - it->hidden_s, shown, 1e-3 * shown);
}

TEST(TpCommOverlap, EachCollectivePipelinesWithItsGemm) {
  // GPT-3 13B, tp 4 with sequence parallelism on one server, no link sharing: every
  // overlapped reduce-scatter is emitted as the GEMM's first chunk g/4, then the rest of the
  // GEMM (3g/4) beside the reduction of 3/4 of the bytes, then the last 1/4 of the bytes:
  // from the GEMM's start to the reduction's end, g/4 + max(3g/4, c(3/4)) + c(1/4). Every
  // all-gather mirrors it before the next segment's first GEMM: c(1/4) + max(c(3/4), 3g/4)
  // + g/4.
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-13b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  Plan plan =
      plan_of("tp: 4\ndp: 2\nglobal_batch_size: 2\nsequence_parallel: true\ntp_comm_overlap: true\nrecompute: full\n");
  const Simulation s = simulate(model, cluster, plan, "analytic-no-contention");
  const sim::TaskGraph& g = s.job.graph;
  auto d = [&](sim::TaskId id) { return s.result.end_s[id] - s.result.start_s[id]; };
  int groups = 0;
  for (sim::TaskId i = 0; i + 3 < static_cast<sim::TaskId>(g.size()); ++i) {
    const sim::Task &a = g.task(i), &rest = g.task(i + 1), &b = g.task(i + 2), &last = g.task(i + 3);
    if (a.kind != sim::TaskKind::Compute || rest.op != sim::CollectiveOp::ReduceScatter ||
        b.kind != sim::TaskKind::Compute || last.op != sim::CollectiveOp::ReduceScatter ||
        rest.kind != sim::TaskKind::Collective || last.kind != sim::TaskKind::Collective)
      continue;
    ++groups;
    EXPECT_NEAR(d(i + 2), 3 * d(i), 1e-12);                      // the GEMM's chunks
    EXPECT_NEAR(rest.bytes, 3 * last.bytes, 1e-6 * rest.bytes);  // the reduction's
    EXPECT_NEAR(s.result.end_s[i + 3] - s.result.start_s[i], d(i) + std::max(d(i + 2), d(i + 1)) + d(i + 3), 1e-12);
  }
  EXPECT_GT(groups, 100);
  int gathers = 0;
  for (sim::TaskId i = 0; i + 3 < static_cast<sim::TaskId>(g.size()); ++i) {
    const sim::Task &first = g.task(i), &rest = g.task(i + 1), &a = g.task(i + 2), &b = g.task(i + 3);
    if (first.kind != sim::TaskKind::Collective || first.op != sim::CollectiveOp::AllGather ||
        rest.kind != sim::TaskKind::Collective || rest.op != sim::CollectiveOp::AllGather ||
        a.kind != sim::TaskKind::Compute || b.kind != sim::TaskKind::Compute)
      continue;
    ++gathers;
    EXPECT_NEAR(d(i + 2), 3 * d(i + 3), 1e-12);
    EXPECT_NEAR(rest.bytes, 3 * first.bytes, 1e-6 * rest.bytes);
    EXPECT_NEAR(s.result.end_s[i + 3] - s.result.start_s[i], d(i) + std::max(d(i + 1), d(i + 2)) + d(i + 3), 1e-12);
  }
  EXPECT_GT(gathers, 100);
}

TEST(TpCommOverlap, HidesTensorParallelCommunicationAndSaysHowMuch) {
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-13b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-4x8.yaml"));
  Plan plan = load_plan_file(src("strategies/presets/tp4-pp2-dp4-interleaved-sp.yaml"));
  plan.global_batch_size = 32;
  const Simulation plain = simulate(model, cluster, plan);
  plan.tp_comm_overlap = true;
  const Simulation overlapped = simulate(model, cluster, plan);
  auto tp = [](const Simulation& s) {
    for (const StreamCommReport& c : s.report.communication)
      if (c.stream == "tp-comm") return c;
    return StreamCommReport{};
  };
  EXPECT_EQ(tp(plain).hidden_s, 0);  // without it every collective waits for its GEMM
  EXPECT_GT(tp(overlapped).hidden_s, 0.3 * tp(overlapped).busy_s);
  EXPECT_LT(overlapped.report.iteration_time_s, plain.report.iteration_time_s);
  // The exposed part fell: what the iteration saved is what the overlap hid, less what the
  // chunks' extra collectives cost.
  EXPECT_LT(tp(overlapped).busy_s - tp(overlapped).hidden_s, tp(plain).busy_s);
}

}  // namespace
}  // namespace dejavu::strategies
