// The convergence model: real gradients, update rules that behave as their papers say,
// robust aggregators that survive Byzantine workers that the mean does not.
#include "strategies/training/convergence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "sim/error.h"
#include "strategies/training/convergence_model.h"

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
  c.max_steps = 3000;
  const ConvergenceResult gossip = train_to_target(c, even(8, 0.3, 0.1), "gossip");
  ASSERT_TRUE(sync.reached);
  ASSERT_TRUE(gossip.reached);  // gossip gets there, later
  EXPECT_GT(gossip.steps_to_target, sync.steps_to_target);
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
  std::printf("two sign-flipping workers of eight: mean does not reach loss %.2g in %d steps (final %.3g)",
              c.target_loss, c.max_steps, mean.curve.back().loss);
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
  // Every compressor changes the updates (a compressor that did nothing would leave the
  // uncompressed curve, to the bit) and still reaches the target.
  ConvergenceConfig plain = small();
  plain.eval_every = 1;
  const ConvergenceResult none = train_to_target(plain, even(8, 0.3, 0.1), "none");
  for (const char* z : {"topk", "1bit", "terngrad", "powersgd"}) {
    SCOPED_TRACE(z);
    ConvergenceConfig c = plain;
    c.compression = z;
    c.density = 0.1;
    c.rank = 2;
    c.max_steps = 1500;
    const ConvergenceResult r = train_to_target(c, even(8, 0.3, 0.1), z);
    EXPECT_TRUE(r.reached);
    ASSERT_GT(r.curve.size(), 2u);
    EXPECT_EQ(r.curve[0].loss, none.curve[0].loss);  // the same start
    EXPECT_NE(r.curve[1].loss, none.curve[1].loss);  // a different first update
  }
}

TEST(Convergence, OneWorkerWithoutFaultsIsPlainSgdStepForStep) {
  // Plain minibatch SGD written out here, on the whole data set (one worker's shard is all of
  // it), with the run's seeded streams: the same weights at every step, to the bit.
  ConvergenceConfig c = small();
  c.workers = 1;
  c.target_loss = 0;
  c.max_steps = 60;
  c.eval_every = 1;
  const ConvergenceResult r = train_to_target(c, even(1, 0.3, 0), "one");
  const convergence::Data data = convergence::make_data(c.data, 1);
  const convergence::Model model(c.model, c.data.dim, c.data.classes, c.hidden);
  convergence::Rng init = convergence::init_stream(c.seed), draw = convergence::worker_stream(c.seed, 0);
  Eigen::VectorXd p = model.init(init);
  std::vector<int> valid(data.vy.size());
  for (size_t i = 0; i < valid.size(); ++i) valid[i] = static_cast<int>(i);
  ASSERT_EQ(r.curve.size(), 61u);
  for (int k = 0; k <= c.max_steps; ++k) {
    EXPECT_EQ(r.curve[k].loss, model.loss(p, data.vx, data.vy, valid, nullptr)) << "step " << k;
    Eigen::VectorXd g;
    model.loss(p, data.x[0], data.y[0], convergence::minibatch(draw, data.y[0].size(), c.batch), &g);
    p -= c.learning_rate * g;
  }
}

TEST(Convergence, SyncDataParallelismIsLargeBatchSgd) {
  // Eight workers with batches of 16 on their shards against one SGD whose batch of 128 is
  // the union of those rows in the union of the shards: the same weights up to rounding
  // (the sums are taken in a different order).
  ConvergenceConfig c = small();
  c.target_loss = 0;
  c.max_steps = 100;
  c.eval_every = 1;
  const ConvergenceResult r = train_to_target(c, even(8, 0.3, 0.1), "sync");
  const convergence::Data data = convergence::make_data(c.data, 8);
  const convergence::Model model(c.model, c.data.dim, c.data.classes, c.hidden);
  const int S = c.data.samples_per_worker;
  Eigen::MatrixXd x(8 * S, c.data.dim);
  std::vector<int> y;
  std::vector<convergence::Rng> draw;
  for (int w = 0; w < 8; ++w) {
    x.middleRows(w * S, S) = data.x[w];
    y.insert(y.end(), data.y[w].begin(), data.y[w].end());
    draw.push_back(convergence::worker_stream(c.seed, w));
  }
  convergence::Rng init = convergence::init_stream(c.seed);
  Eigen::VectorXd p = model.init(init);
  std::vector<int> valid(data.vy.size());
  for (size_t i = 0; i < valid.size(); ++i) valid[i] = static_cast<int>(i);
  ASSERT_EQ(r.curve.size(), 101u);
  for (int k = 0; k <= c.max_steps; ++k) {
    const double expected = model.loss(p, data.vx, data.vy, valid, nullptr);
    EXPECT_NEAR(r.curve[k].loss, expected, 1e-12 * expected) << "step " << k;
    std::vector<int> rows;
    for (int w = 0; w < 8; ++w)
      for (int row : convergence::minibatch(draw[w], S, c.batch)) rows.push_back(w * S + row);
    Eigen::VectorXd g;
    model.loss(p, x, y, rows, &g);
    p -= c.learning_rate * g;
  }
}

TEST(Convergence, AFailStopRollsBackToTheCheckpointAfterTheRestart) {
  ConvergenceConfig c = small();
  c.target_loss = 0;
  c.max_steps = 100;
  c.checkpoint_every = 20;
  c.failures = {{10.2, 3}};  // steps take 0.4 s: during step 26, six steps after the checkpoint at 20
  c.recovery.policy = "checkpoint";
  c.recovery.restart_s = 30;
  const ConvergenceResult r = train_to_target(c, even(8, 0.3, 0.1), "checkpoint");
  EXPECT_EQ(r.failures, 1);
  EXPECT_EQ(r.steps_lost, 5);
  EXPECT_DOUBLE_EQ(r.downtime_s, 30);
  EXPECT_EQ(r.workers_left, 8);
  // Evaluated every 5 steps: at step 20 (the checkpoint) and, after the restart at
  // 10.2 + 30 s, the same weights again; the run then goes on to 100 steps of work.
  auto at = [&](double t) {
    for (const CurvePoint& p : r.curve)
      if (p.time_s == t) return p;
    ADD_FAILURE() << "no point at " << t;
    return CurvePoint{};
  };
  EXPECT_EQ(at(40.2).loss, at(20 * 0.4).loss);
  EXPECT_DOUBLE_EQ(r.curve.back().time_s, 40.2 + (100 - 25) * 0.4);
  // A hot spare takes over in the swap time instead.
  c.recovery.policy = "spares";
  c.recovery.spares = 1;
  c.recovery.swap_s = 2;
  const ConvergenceResult s = train_to_target(c, even(8, 0.3, 0.1), "spares");
  EXPECT_DOUBLE_EQ(s.downtime_s, 2);
  EXPECT_DOUBLE_EQ(s.curve.back().time_s, 12.2 + (100 - 25) * 0.4);
}

TEST(Convergence, ElasticRecoveryGoesOnWithoutTheFailedWorker) {
  ConvergenceConfig c = small();
  c.recovery.policy = "elastic";
  c.recovery.restart_s = 5;
  c.failures = {{2.0, 1}, {3.0, 6}};
  // Synchronous: each failure restarts the job from its checkpoint (here the start) with
  // one worker fewer.
  const ConvergenceResult sync = train_to_target(c, even(8, 0.3, 0.1), "sync");
  EXPECT_EQ(sync.failures, 2);
  EXPECT_EQ(sync.workers_left, 6);
  EXPECT_DOUBLE_EQ(sync.downtime_s, 10);
  EXPECT_TRUE(sync.reached);
  // Gossip and the asynchronous server do not stop: nothing is lost, nobody waits.
  for (const char* rule : {"gossip", "ps-async"}) {
    SCOPED_TRACE(rule);
    c.rule = rule;
    c.staleness = 2;
    const ConvergenceResult r = train_to_target(c, even(8, 0.3, 0.1), rule);
    EXPECT_EQ(r.failures, 2);
    EXPECT_EQ(r.workers_left, 6);
    EXPECT_EQ(r.downtime_s, 0);
    EXPECT_EQ(r.steps_lost, 0);
    EXPECT_TRUE(r.reached);
  }
}

TEST(Convergence, ParallelInitialisationGoesOnFromTheBestProbe) {
  ConvergenceConfig c = small();
  c.model = "mlp";
  c.hidden = 16;
  c.init_candidates = 4;
  c.probe_steps = 10;
  c.target_loss = 0;
  c.max_steps = 40;
  const ConvergenceResult r = train_to_target(c, even(8, 0.3, 0.1), "probe");
  ASSERT_EQ(r.probe_losses.size(), 4u);
  const auto best = std::min_element(r.probe_losses.begin(), r.probe_losses.end());
  EXPECT_EQ(r.chosen_init, best - r.probe_losses.begin());
  // The curve at the end of the probe is the best candidate's loss, at ten iterations.
  ASSERT_EQ(r.curve[2].step, 10);
  EXPECT_DOUBLE_EQ(r.curve[2].time_s, 10 * 0.4);
  EXPECT_EQ(r.curve[2].loss, *best);
  for (double l : r.probe_losses) EXPECT_GE(l, *best);
  // Keeping two and resampling near the best probes a second round, then goes on.
  c.keep = 2;
  c.resample = 0.05;
  const ConvergenceResult two = train_to_target(c, even(8, 0.3, 0.1), "resample");
  EXPECT_EQ(two.curve.back().step, 40);
  EXPECT_LT(two.curve.back().loss, two.curve.front().loss);
  c.init_candidates = 9;  // more candidates than workers
  EXPECT_THROW(train_to_target(c, even(8, 0.3, 0.1), "too many"), ConfigError);
}

TEST(Convergence, ClassImbalanceFollowsTheGeometricSplit) {
  // imbalance 10 over 4 classes: shares proportional to 10^(-c/3).
  ConvergenceData d = parse_data_spec("synthetic:classes=4,dim=8,samples=4096,imbalance=10");
  EXPECT_EQ(d.imbalance, 10);
  const convergence::Data data = convergence::make_data(d, 1);
  std::vector<double> count(4);
  for (int y : data.y[0]) count[y] += 1;
  double norm = 0;
  for (int k = 0; k < 4; ++k) norm += std::pow(10.0, -k / 3.0);
  for (int k = 0; k < 4; ++k) {
    const double p = std::pow(10.0, -k / 3.0) / norm;
    const double sigma = std::sqrt(4096 * p * (1 - p));
    EXPECT_NEAR(count[k], 4096 * p, 4 * sigma) << "class " << k;
  }
  EXPECT_THROW(parse_data_spec("synthetic:imbalance=0.5"), ConfigError);
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
