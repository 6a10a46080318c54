// The convergence model: real gradients, update rules that behave as their papers say,
// robust aggregators that survive Byzantine workers that the mean does not.
#include "strategies/convergence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "sim/error.h"

namespace dejavu::strategies {
namespace {

ConvergenceConfig small() {
  ConvergenceConfig c;
  c.data.classes = 4;
  c.data.dim = 16;
  c.data.samples_per_worker = 256;
  c.data.separation = 6;
  c.workers = 8;
  c.learning_rate = 0.3;
  c.batch = 16;
  c.max_steps = 400;
  c.target_loss = 0.25;
  c.eval_every = 5;
  return c;
}

WorkerTiming even(int workers, double compute, double comm) {
  WorkerTiming t;
  t.compute_s.assign(workers, compute);
  t.communication_s = comm;
  t.iteration_s = compute + comm;
  return t;
}

TEST(Convergence, GradientsMatchFiniteDifferences) {
  EXPECT_LT(gradient_check("logistic", 6, 3, 0, 1), 1e-6);
  EXPECT_LT(gradient_check("mlp", 6, 3, 5, 2), 1e-5);
}

TEST(Convergence, SyncReachesTheTargetAndTimeIsStepsTimesTheIteration) {
  const ConvergenceResult r = train_to_target(small(), even(8, 0.3, 0.1), "sync");
  ASSERT_TRUE(r.reached);
  EXPECT_GT(r.steps_to_target, 0);
  EXPECT_DOUBLE_EQ(r.time_to_target_s, r.steps_to_target * 0.4);
  EXPECT_GT(r.curve.front().loss, 1.0);  // about log 4 at the start
  // Same seed, same curve, to the bit.
  const ConvergenceResult again = train_to_target(small(), even(8, 0.3, 0.1), "sync");
  ASSERT_EQ(again.curve.size(), r.curve.size());
  for (size_t i = 0; i < r.curve.size(); ++i) EXPECT_EQ(again.curve[i].loss, r.curve[i].loss);
}

TEST(Convergence, StalenessIsWhatTheRuleSays) {
  ConvergenceConfig c = small();
  c.target_loss = 0;  // never reached: every step runs
  c.max_steps = 200;
  c.rule = "pipedream";
  c.staleness = 3;  // pp 4: after the first three steps, always pp - 1 = 3 steps old
  const ConvergenceResult p = train_to_target(c, even(8, 0.3, 0.1), "pipedream");
  EXPECT_NEAR(p.mean_staleness, (0 + 1 + 2 + 3 * 197) / 200.0, 1e-12);
  c.rule = "ps-async";
  c.staleness = 100;
  const ConvergenceResult a = train_to_target(c, even(8, 0.3, 0.1), "ps-async");
  // Equal workers push in turn: worker w's first gradient is w updates old, every later one
  // n - 1 = 7 (the others pushed once each since it pulled).
  EXPECT_NEAR(a.mean_staleness, (28 + (1600 - 8) * 7) / 1600.0, 1e-12);
}

TEST(Convergence, BoundedStalenessMakesFastWorkersWaitForAStraggler) {
  ConvergenceConfig c = small();
  c.rule = "ps-async";
  WorkerTiming t = even(8, 0.3, 0.1);
  t.compute_s[3] = 3.0;  // ten times slower
  c.staleness = 2;
  const ConvergenceResult bounded = train_to_target(c, t, "bounded");
  c.staleness = 1000;
  const ConvergenceResult free = train_to_target(c, t, "free");
  ASSERT_TRUE(bounded.reached && free.reached);
  EXPECT_GT(bounded.time_to_target_s, 2 * free.time_to_target_s);
}

TEST(Convergence, GossipNeedsMoreStepsThanAllReduceOnSkewedShards) {
  ConvergenceConfig c = small();
  c.data.skew = 0.9;  // each worker sees mostly its own class
  const ConvergenceResult sync = train_to_target(c, even(8, 0.3, 0.1), "sync");
  c.rule = "gossip";
  c.peers = 1;
  const ConvergenceResult gossip = train_to_target(c, even(8, 0.3, 0.1), "gossip");
  ASSERT_TRUE(sync.reached);
  EXPECT_TRUE(!gossip.reached || gossip.steps_to_target > sync.steps_to_target)
      << gossip.steps_to_target << " vs " << sync.steps_to_target;
}

TEST(Convergence, RingGossipConsensusShrinksAtTheSpectralGapRate) {
  // No gradient steps (learning rate 0), eight workers from different initialisations
  // averaging with both ring neighbours: the spread from the mean shrinks by the second
  // eigenvalue of W = (I + S + S^T)/3, (1 + 2 cos(2 pi / 8)) / 3, per step.
  ConvergenceConfig c = small();
  c.rule = "gossip";
  c.gossip_topology = "ring";
  c.independent_init = true;
  c.learning_rate = 0;
  c.target_loss = 0;
  c.max_steps = 60;
  c.eval_every = 1;
  const ConvergenceResult r = train_to_target(c, even(8, 0.3, 0.1), "ring");
  const double lambda2 = (1 + 2 * std::cos(2 * M_PI / 8)) / 3;
  ASSERT_GE(r.curve.size(), 60u);
  const double rate = r.curve[59].consensus / r.curve[58].consensus;
  EXPECT_NEAR(rate, lambda2, 0.01 * lambda2);
  EXPECT_LT(r.curve[59].consensus, 1e-3 * r.curve[1].consensus);
}

TEST(Convergence, RingGossipReachesTheLossOfAllReduceGivenEnoughSteps) {
  ConvergenceConfig c = small();
  c.target_loss = 0;
  c.max_steps = 600;
  const ConvergenceResult sync = train_to_target(c, even(8, 0.3, 0.1), "sync");
  c.rule = "gossip";
  c.gossip_topology = "ring";
  const ConvergenceResult ring = train_to_target(c, even(8, 0.3, 0.1), "ring");
  EXPECT_NEAR(ring.curve.back().loss, sync.curve.back().loss, 0.05 * sync.curve.back().loss);
}

TEST(Convergence, RobustAggregatorsSurviveByzantineWorkersTheMeanDoesNot) {
  ConvergenceConfig c = small();
  c.byzantine = {{1, "sign_flip", -4}, {5, "sign_flip", -4}};  // two of eight push -4x their gradient
  c.trim = 2;
  // Measured: the mean ends at loss 300 after 400 steps; median 15 steps, trimmed mean 20,
  // Krum 15, Zeno 10.
  const ConvergenceResult mean = train_to_target(c, even(8, 0.3, 0.1), "mean");
  EXPECT_FALSE(mean.reached);
  std::printf("two sign-flipping workers of eight: mean does not reach loss %.2g in %d steps (final %.3g)", c.target_loss,
              c.max_steps, mean.curve.back().loss);
  for (const char* agg : {"median", "trimmed", "krum", "zeno"}) {
    SCOPED_TRACE(agg);
    c.aggregator = agg;
    const ConvergenceResult r = train_to_target(c, even(8, 0.3, 0.1), agg);
    EXPECT_TRUE(r.reached);
    std::printf("; %s in %ld steps", agg, r.steps_to_target);
  }
  std::printf("\n");
}

TEST(Convergence, CompressedGradientsStillConverge) {
  for (const char* z : {"topk", "1bit", "terngrad", "powersgd"}) {
    SCOPED_TRACE(z);
    ConvergenceConfig c = small();
    c.compression = z;
    c.density = 0.1;
    c.rank = 2;
    c.max_steps = 1500;
    EXPECT_TRUE(train_to_target(c, even(8, 0.3, 0.1), z).reached);
  }
}

TEST(Convergence, DataSpecErrorsNameTheKey) {
  EXPECT_EQ(parse_data_spec("synthetic:classes=5,dim=8,skew=0.5").classes, 5);
  EXPECT_THROW(parse_data_spec("synthetic:classes=1"), ConfigError);
  EXPECT_THROW(parse_data_spec("synthetic:skew=2"), ConfigError);
  EXPECT_THROW(parse_data_spec("imagenet"), ConfigError);
  try {
    parse_data_spec("synthetic:colour=3");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("colour"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dejavu::strategies
