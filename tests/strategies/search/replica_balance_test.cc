// Heterogeneous data parallelism: a replica's step grows by one of its microbatches per
// microbatch it takes (the lowering runs each replica's own count), the split is the
// min-max optimum (hand-worked and brute force), equal counts are the even plan, and on a
// mixed cluster balanced replicas and every searcher's best beat every even plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "strategies/search/min_max_split.h"
#include "strategies/search/replica_balance.h"
#include "strategies/search/searchers.h"
#include "strategies/search/space.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies::search {
namespace {

using dejavu::testing::src;

TEST(MinMaxCounts, HandWorkedSplits) {
  // t = (3, 1), 8 microbatches: max(3a, b) with a + b = 8 is 6 at a = 2.
  EXPECT_EQ(min_max_counts({3, 1}, {}, 8, 1), (std::vector<int>{2, 6}));
  // In units of 2 (interleaved over pp = 2): a in {2, 4, 6}, 12 in all: max(2a, b) = 8 at a = 4.
  EXPECT_EQ(min_max_counts({2, 1}, {}, 12, 2), (std::vector<int>{4, 8}));
  // Every replica keeps at least one unit, however slow.
  EXPECT_EQ(min_max_counts({100, 1, 1}, {}, 5, 1), (std::vector<int>{1, 2, 2}));
  EXPECT_TRUE(min_max_counts({1, 1}, {}, 7, 2).empty());     // not in whole units
  EXPECT_TRUE(min_max_counts({1, 1, 1}, {}, 2, 1).empty());  // fewer microbatches than replicas
  // Fixed costs (an embedding on the first stage): max(4 + a, b) with a + b = 10 is 7 at a = 3.
  EXPECT_EQ(min_max_counts({1, 1}, {4, 0}, 10), (std::vector<int>{3, 7}));
}

TEST(MinMaxCounts, IsTheMinMaxOptimumOfBruteForce) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> speed(0.1, 3);
  for (int k = 0; k < 200; ++k) {
    const int n = 2 + k % 3, total = n + static_cast<int>(rng() % 9);
    std::vector<double> t(n), f(n);
    for (double& x : t) x = speed(rng);
    for (double& x : f) x = k % 2 ? speed(rng) : 0;
    const std::vector<int> split = min_max_counts(t, f, total, 1);
    double got = 0, best = INFINITY;
    for (int r = 0; r < n; ++r) got = std::max(got, f[r] + split[r] * t[r]);
    std::vector<int> m(n, 1);  // every split with each count >= 1
    std::function<void(int, int)> walk = [&](int r, int left) {
      if (r == n - 1) {
        m[r] = left;
        double worst = 0;
        for (int i = 0; i < n; ++i) worst = std::max(worst, f[i] + m[i] * t[i]);
        best = std::min(best, worst);
        return;
      }
      for (int c = 1; c <= left - (n - 1 - r); ++c) {
        m[r] = c;
        walk(r + 1, left - c);
      }
    };
    walk(0, total);
    EXPECT_DOUBLE_EQ(got, best) << "case " << k;
  }
}

struct Mixed {
  platforms::Cluster cluster = platforms::load_cluster_file(src("platforms/presets/mixed-a100-h100-2x8.yaml"));
  workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-13b.yaml"));
};

// tp4 dp4 on one DGX A100 and one DGX H100: replicas 0 and 1 on A100s, 2 and 3 on H100s,
// 32 microbatches of 2. While the A100 replicas are the slower, the step is a m_A + c (a one
// A100 microbatch, c the gradient all-reduce and optimizer step after the last backward),
// so moving microbatches between the types changes it by whole A100 microbatches.
double step_s(const Mixed& m, std::vector<int> split) {
  Plan plan;
  plan.tp = 4;
  plan.dp = 4;
  plan.micro_batch_size = 2;
  plan.global_batch_size = 64;
  plan.replica_microbatches = std::move(split);
  return simulate(m.model, m.cluster, plan, "analytic").report.iteration_time_s;
}

TEST(HeterogeneousDataParallelism, TheStepGrowsByOneSlowMicrobatchPerMicrobatchItTakes) {
  const Mixed m;
  const double even = step_s(m, {}), t8 = step_s(m, {8, 8, 8, 8}), t7 = step_s(m, {7, 7, 9, 9}),
               t6 = step_s(m, {6, 6, 10, 10});
  EXPECT_NEAR(t8, even, 1e-12 * even);  // equal counts are the even plan
  const double a = t7 - t6;
  EXPECT_GT(a, 0);
  EXPECT_NEAR(t8 - t7, a, 1e-9 * t8);
  EXPECT_NEAR(t8 - t6, 2 * a, 1e-9 * t8);
  // The H100 replicas alone, with all but two microbatches each: they take the step once
  // 30 of 32 would run there, so the A100 line no longer predicts it.
  EXPECT_LT(step_s(m, {1, 1, 15, 15}), even);
}

TEST(HeterogeneousDataParallelism, BalancedReplicasGiveTheH100sMoreAndBeatTheEvenSplit) {
  const Mixed m;
  const Problem problem{&m.model, &m.cluster, 64};
  Plan even;
  even.tp = 4;
  even.dp = 4;
  even.micro_batch_size = 2;
  even.global_batch_size = 64;
  Plan balanced;
  ASSERT_TRUE(balance_replicas(problem, even, balanced));
  const std::vector<int>& split = balanced.replica_microbatches;
  ASSERT_EQ(split.size(), 4u);
  EXPECT_EQ(split[0], split[1]);
  EXPECT_EQ(split[2], split[3]);
  EXPECT_GT(split[2], 2 * split[0]);  // an H100 runs these kernels more than twice as fast
  EXPECT_LT(step_s(m, split), 0.8 * step_s(m, {}));
}

TEST(HeterogeneousDataParallelism, EverySearcherBeatsEveryEvenPlanOnAMixedCluster) {
  // Every searcher's plans are tried with their stages and replicas balanced (Tracker).
  const Mixed m;
  const Problem problem{&m.model, &m.cluster, 64};
  SimulationEvaluator even_only(problem);
  double best_even = INFINITY;
  for (const Plan& p : enumerate(problem, default_space(problem)))
    best_even = std::min(best_even, even_only.evaluate(p).cost());
  for (const char* name : {"bo", "rl"}) {  // grid: the search snapshot of mixed-a100-h100-2x8
    SimulationEvaluator e(problem);
    SearchOptions o;
    o.iterations = 60;  // few, and no polish: the balancing, not the searcher, is under test
    o.polish = false;
    const SearchResult r = searchers().make(name)->search(problem, e, o);
    ASSERT_TRUE(r.best()) << name;
    const Plan& b = r.best()->plan;
    EXPECT_TRUE(!b.replica_microbatches.empty() || !b.stages.empty()) << name << ": " << describe(b);
    EXPECT_LT(r.best()->score.iteration_time_s, 0.8 * best_even) << name << ": " << describe(b);
  }
}

}  // namespace
}  // namespace dejavu::strategies::search
