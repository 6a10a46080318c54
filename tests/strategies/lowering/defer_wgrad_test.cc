// Megatron-Core's defer_embedding_wgrad_compute (strategies/plan.h): the last pipeline stage
// leaves the output layer's weight gradients of its first wgrad_deferral_limit microbatches
// for the pipeline flush, holding their inputs and output gradients until then.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/config_node.h"
#include "sim/error.h"
#include "strategies/simulate.h"
#include "tests/source_dir.h"
#include "workloads/generator.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

// GPT-3 1.3B (24 layers, hidden 2048, vocabulary 51200, 2048 tokens, bf16) in 4 stages of
// tensor parallelism 2 on one DGX A100, 16 microbatches of one sample.
struct DeferredWgrad : ::testing::Test {
  workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  platforms::Cluster cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  static std::string base() { return "tp: 2\npp: 4\nglobal_batch_size: 16\n"; }
  Simulation run(const std::string& extra) const {
    return simulate(model, cluster, load_plan(ConfigNode::load_string(base() + extra, "plan.yaml")));
  }
  static double last_stage_peak(const Simulation& s, int last = 3) {
    for (const SimulatedDeviceReport& d : s.report.simulated)
      if (d.stage == last) return d.peak_memory_bytes;
    return -1;
  }
  static std::vector<sim::TaskId> labelled(const Simulation& s, const std::string& text) {
    std::vector<sim::TaskId> out;
    for (size_t i = 0; i < s.job.graph.size(); ++i) {
      const sim::Task& t = s.job.graph.task(static_cast<sim::TaskId>(i));
      if (t.label >= 0 && s.job.graph.labels()[t.label].find(text) != std::string::npos)
        out.push_back(static_cast<sim::TaskId>(i));
    }
    return out;
  }
};

TEST_F(DeferredWgrad, RefusedWhereThereIsNoFlushToDeferInto) {
  auto error_of = [](const std::string& yaml) -> std::string {
    try {  // a DGX A100 whose servers' host side is described (activations may go there)
      const workloads::ModelGraph m = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
      const platforms::Cluster c = platforms::load_cluster_file(src("platforms/presets/dgx-a100-40gb-1x8.yaml"));
      simulate(m, c, load_plan(ConfigNode::load_string(yaml, "plan.yaml")));
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error_of("tp: 8\nglobal_batch_size: 4\ndefer_embedding_wgrad_compute: true\n")
                .find("defer_embedding_wgrad_compute: defers into the flush of a pipeline; needs pp > 1"),
            std::string::npos);
  EXPECT_NE(error_of("tp: 2\npp: 4\nglobal_batch_size: 8\nschedule: zb-h1\ndefer_embedding_wgrad_compute: true\n")
                .find("not pp 4 with zb-h1"),
            std::string::npos);
  EXPECT_NE(error_of("tp: 2\npp: 4\nglobal_batch_size: 8\ndefer_embedding_wgrad_compute: true\n"
                     "offload: {activations: cpu}\n")
                .find("use one or the other"),
            std::string::npos);
  EXPECT_NE(error_of("tp: 2\npp: 4\nglobal_batch_size: 8\ndefer_embedding_wgrad_compute: true\n"
                     "wgrad_deferral_limit: -1\n")
                .find("plan.yaml:5:23: wgrad_deferral_limit"),
            std::string::npos);
}

TEST_F(DeferredWgrad, TheFirstLimitMicrobatchesWeightGradientsRunInTheFlush) {
  const Simulation whole = run(""), deferred = run("defer_embedding_wgrad_compute: true\nwgrad_deferral_limit: 4\n");
  const std::vector<sim::TaskId> w = labelled(deferred, "bwd-weight");
  ASSERT_EQ(w.size(), 4u);  // microbatches 0 to 3, on the last stage
  EXPECT_TRUE(labelled(whole, "bwd-weight").empty());
  // They run after every forward and backward of their GPU, and its optimizer step after them.
  const sim::TaskGraph& g = deferred.job.graph;
  int passes = 0, steps = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const sim::Task& t = g.task(static_cast<sim::TaskId>(i));
    if (t.kind != sim::TaskKind::Compute || t.device != g.task(w.front()).device || t.label < 0) continue;
    const std::string& label = g.labels()[t.label];
    if (label.rfind("optimizer step", 0) == 0) {
      ++steps;
      EXPECT_GE(deferred.result.start_s[i] + 1e-12, deferred.result.end_s[w.back()]);
    } else if (label.rfind("fwd", 0) == 0 || label.rfind("bwd ", 0) == 0) {
      ++passes;
      EXPECT_LE(deferred.result.end_s[i], deferred.result.start_s[w.front()] + 1e-12) << label;
    }
  }
  EXPECT_GT(passes, 0);
  EXPECT_EQ(steps, 1);
  // The last stage is the busiest (it computes the head and the loss): taking work off its
  // steady state and into the flush, where the stages before it are still draining, shortens
  // the step.
  EXPECT_LT(deferred.report.iteration_time_s, whole.report.iteration_time_s);
}

TEST_F(DeferredWgrad, EachDeferredMicrobatchHoldsTheHeadsInputAndOutputGradient) {
  // Until its weight gradient runs, a deferred microbatch keeps the head's input (2048 tokens
  // x 2048 hidden, bf16) and its output gradient (2048 tokens x 51200 / tp 2 logits, bf16):
  // 8.39 MB + 104.9 MB. The held buffers grow with the deferred microbatches until the flush,
  // so two more deferred add twice that to the last stage's peak.
  const double held = 2048.0 * 2048 * 2 + 2048.0 * 51200 / 2 * 2;
  const double two = last_stage_peak(run("defer_embedding_wgrad_compute: true\nwgrad_deferral_limit: 2\n"));
  const double four = last_stage_peak(run("defer_embedding_wgrad_compute: true\nwgrad_deferral_limit: 4\n"));
  ASSERT_GT(two, 0);
  EXPECT_NEAR(four - two, 2 * held, 1e-9 * four);
}

TEST_F(DeferredWgrad, UnderContextAndSequenceParallelismARankHoldsItsTokensOnly) {
  // Context parallelism 2 gives a rank 1024 of the 2048 tokens; sequence parallelism splits
  // the head's input over tp 2 (512 tokens x 2048 hidden, bf16: 2.10 MB), while the output
  // gradient covers the rank's 1024 tokens x 51200 / 2 logits (bf16: 52.4 MB).
  auto peak = [&](int limit) {
    const std::string plan =
        "tp: 2\npp: 2\ncp: 2\nsequence_parallel: true\nglobal_batch_size: 16\n"
        "defer_embedding_wgrad_compute: true\nwgrad_deferral_limit: " +
        std::to_string(limit) + "\n";
    return last_stage_peak(simulate(model, cluster, load_plan(ConfigNode::load_string(plan, "plan.yaml"))), 1);
  };
  const double held = 512.0 * 2048 * 2 + 1024.0 * 51200 / 2 * 2;
  const double two = peak(2), four = peak(4);
  ASSERT_GT(two, 0);
  EXPECT_NEAR(four - two, 2 * held, 1e-9 * four);
}

}  // namespace
}  // namespace dejavu::strategies
