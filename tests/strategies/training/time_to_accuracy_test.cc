// Time to accuracy as a search objective: a plan's time is its steps to the target times
// its simulated step, plain synchronous plans tie in steps whatever their dp (the same
// global batch), the update-rule variants are the ones the plan's knobs allow and survive a
// round trip through the plan YAML, and the ranking orders by steps x step, not by step.
#include <gtest/gtest.h>

#include <sstream>

#include "strategies/search/space.h"
#include "strategies/simulate.h"
#include "strategies/training/time_to_accuracy.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

struct Inputs {
  platforms::Cluster cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  search::Problem problem() const { return {&model, &cluster, 64}; }
};

Plan plan_of(const Inputs& in, int tp, int pp) {
  Plan p;
  EXPECT_TRUE(search::make_plan(in.problem(), tp, pp, 1, p));
  return p;
}

ConvergenceConfig base() {
  ConvergenceConfig c;
  c.target_loss = 0.6;
  c.eval_every = 1;
  return c;
}

TEST(TimeToAccuracy, IsStepsTimesTheSimulatedStepAndSyncPlansTieInSteps) {
  const Inputs in;
  TrainingCache cache;
  const Plan dp8 = plan_of(in, 1, 1), dp4 = plan_of(in, 2, 1);
  const TimeToAccuracy a = time_to_accuracy(in.model, in.cluster, dp8, base(), "analytic", &cache),
                       b = time_to_accuracy(in.model, in.cluster, dp4, base(), "analytic", &cache);
  ASSERT_TRUE(a.reached && b.reached);
  EXPECT_EQ(a.rule, "sync");
  EXPECT_DOUBLE_EQ(a.step_s, simulate(in.model, in.cluster, dp8, "analytic").report.iteration_time_s);
  EXPECT_DOUBLE_EQ(a.time_s, a.steps * a.step_s);
  EXPECT_EQ(a.steps, b.steps);  // one algorithm over the same global batch
  EXPECT_EQ(cache.size(), 1u);  // trained once
  EXPECT_DOUBLE_EQ(b.time_s / a.time_s, b.step_s / a.step_s);
}

TEST(TimeToAccuracy, VariantsAreTheRulesThePlanAllowsAndRoundTripThroughYaml) {
  const Inputs in;
  Plan plain = plan_of(in, 1, 1);
  plain.zero = 1;
  std::vector<std::string> rules;
  for (const Plan& v : update_rule_variants(plain)) {
    EXPECT_EQ(v.zero, 0);  // these rules exchange plain all-reduces
    rules.push_back(plan_convergence(v, base()).rule + "+" + v.data_parallel.compression);
    std::ostringstream yaml;
    search::write_plan_yaml(yaml, v, "variant");
    const Plan back = load_plan(ConfigNode::load_string(yaml.str(), "variant.yaml"));
    EXPECT_EQ(search::plan_key(back), search::plan_key(v)) << yaml.str();
  }
  EXPECT_EQ(rules,
            (std::vector<std::string>{"sync+topk", "sync+powersgd", "sync+1bit", "delayed+none", "gossip+none"}));
  Plan staged = plan_of(in, 1, 2);
  staged.zero = 3;  // ZeRO-3 keeps its rule; two stages may run asynchronously
  const auto v = update_rule_variants(staged);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].schedule, "pipedream-2bw");
}

TEST(TimeToAccuracy, TheRankingIsByStepsTimesStep) {
  const Inputs in;
  search::SearchResult r;
  for (const Plan& p : {plan_of(in, 1, 1), plan_of(in, 2, 2)}) {
    r.top.emplace_back();
    r.top.back().plan = p;
  }
  std::vector<search::SearchResult> results{r};
  rank_by_time_to_accuracy(in.problem(), results, base(), 50);
  const auto& top = results[0].top;
  ASSERT_GT(top.size(), 2u);  // the plans and their variants
  for (size_t k = 0; k < top.size(); ++k) {
    EXPECT_DOUBLE_EQ(top[k].to_accuracy_s, top[k].steps * top[k].score.iteration_time_s) << k;
    if (k > 0) {
      EXPECT_LE(top[k - 1].to_accuracy_s, top[k].to_accuracy_s) << k;
    }
  }
}

}  // namespace
}  // namespace dejavu::strategies
