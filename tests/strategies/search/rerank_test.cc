// Ranking the search's plans on the engine that shares links (strategies/search/rerank.h):
// hand-worked pools with a price per plan, so the plans priced and the order are known.
#include "strategies/search/rerank.h"

#include <gtest/gtest.h>

#include <map>

#include "platforms/cluster.h"
#include "sim/error.h"
#include "strategies/simulate.h"
#include "strategies/search/space.h"
#include "workloads/generator.h"

namespace dejavu::strategies::search {
namespace {

// A pool of plans told apart by tp (1, 2, ...), alone times as given, best first.
std::vector<Candidate> pool_of(const std::vector<double>& alone) {
  std::vector<Candidate> pool;
  for (size_t i = 0; i < alone.size(); ++i) {
    Candidate c;
    c.plan.tp = static_cast<int>(i) + 1;
    c.score.valid = c.score.fits = true;
    c.score.iteration_time_s = alone[i];
    c.score.tokens_per_s = 1000 / alone[i];
    pool.push_back(c);
  }
  return pool;
}

struct Prices {
  std::map<int, double> by_tp;  // plan tp -> time shared; absent: the engine refuses it
  std::vector<int> asked;
  double operator()(const Plan& p) {
    asked.push_back(p.tp);
    auto it = by_tp.find(p.tp);
    if (it == by_tp.end()) throw ModelError("plan " + std::to_string(p.tp) + " refused");
    return it->second;
  }
};

TEST(Rerank, StopsOnceNoPlanLeftCanEnterTheTop) {
  // Alone 1, 2, 3, 4, 5; shared 5, 2.5, 3.5, 10, 4. Top 2: after plans 1 and 2 the top is
  // {2.5, 5}; plan 3 (alone 3 < 5) enters at 3.5; plan 4 alone (4) is not below 3.5: stop.
  Prices prices{{{1, 5}, {2, 2.5}, {3, 3.5}, {4, 10}, {5, 4}}, {}};
  const Ranking r = rerank(pool_of({1, 2, 3, 4, 5}), false, 2, 100, std::ref(prices));
  EXPECT_EQ(prices.asked, (std::vector<int>{1, 2, 3}));
  ASSERT_EQ(r.top.size(), 2u);
  EXPECT_EQ(r.top[0].plan.tp, 2);
  EXPECT_EQ(r.top[1].plan.tp, 3);
  EXPECT_DOUBLE_EQ(r.top[0].score.iteration_time_s, 2.5);
  EXPECT_DOUBLE_EQ(r.top[0].alone_s, 2);
  EXPECT_DOUBLE_EQ(r.top[0].score.tokens_per_s, 1000 / 2.5);  // the same tokens in 2.5 s
  EXPECT_EQ(r.priced, 3);
  EXPECT_TRUE(r.complete);  // by the bound, though the pool was not every plan
}

TEST(Rerank, TheCapLeavesTheRankingIncomplete) {
  Prices prices{{{1, 5}, {2, 2.5}, {3, 3.5}}, {}};
  const Ranking r = rerank(pool_of({1, 2, 3, 4}), true, 2, 2, std::ref(prices));
  EXPECT_EQ(r.priced, 2);
  ASSERT_EQ(r.top.size(), 2u);
  EXPECT_EQ(r.top[0].plan.tp, 2);
  EXPECT_EQ(r.top[1].plan.tp, 1);
  EXPECT_FALSE(r.complete);  // plan 3 (alone 3 < 5) might have entered
}

TEST(Rerank, AnExhaustedPoolIsCompleteOnlyIfItHeldEveryPlan) {
  for (bool every_plan : {true, false}) {
    Prices prices{{{1, 1.5}, {2, 2.5}}, {}};
    const Ranking r = rerank(pool_of({1, 2}), every_plan, 5, 100, std::ref(prices));
    EXPECT_EQ(r.top.size(), 2u);
    EXPECT_EQ(r.complete, every_plan);
  }
}

TEST(Rerank, PlansTheEngineRefusesAreDroppedAndNamed) {
  Prices prices{{{1, 1.5}, {3, 3.2}}, {}};  // plan 2 refused
  const Ranking r = rerank(pool_of({1, 2, 3}), true, 2, 100, std::ref(prices));
  ASSERT_EQ(r.top.size(), 2u);
  EXPECT_EQ(r.top[1].plan.tp, 3);
  EXPECT_EQ(r.failed, 1);
  EXPECT_NE(r.error.find("plan 2 refused"), std::string::npos) << r.error;
}

TEST(Rerank, TiesKeepThePlanFasterAlone) {
  Prices prices{{{1, 2}, {2, 2}}, {}};
  const Ranking r = rerank(pool_of({1, 1.5}), true, 2, 100, std::ref(prices));
  ASSERT_EQ(r.top.size(), 2u);
  EXPECT_EQ(r.top[0].plan.tp, 1);
}

// The bound rerank() stands on: sharing links never makes a plan faster than the search's
// price alone. Every fitting plan of the search space on two servers whose GPUs share one NIC
// (where sharing moves times by up to 41%).
TEST(Rerank, SharingNeverSpeedsAPlanUp) {
  const std::string root = DEJAVU_SOURCE_DIR;
  const platforms::Cluster cluster =
      platforms::load_cluster_file(root + "/tests/fixtures/contention/servers-2x2-shared-nic.yaml");
  const workloads::ModelGraph model = workloads::load_workload_file(root + "/workloads/presets/gpt3-1.3b.yaml");
  const Problem problem{&model, &cluster, 32};
  SimulationEvaluator evaluator(problem);
  int fitting = 0, slowed = 0;
  for (const Plan& plan : enumerate(problem, default_space(problem))) {
    const Score alone = evaluator.evaluate(plan);
    if (!(alone.cost() < 1e300)) continue;
    ++fitting;
    const double shared = simulate(model, cluster, plan, "analytic").report.iteration_time_s;
    EXPECT_GE(shared, alone.iteration_time_s * (1 - 1e-9)) << describe(plan);
    slowed += shared > alone.iteration_time_s * 1.01;
  }
  EXPECT_GT(fitting, 100);
  EXPECT_GT(slowed, 10);  // the platform does contend
}

}  // namespace
}  // namespace dejavu::strategies::search
