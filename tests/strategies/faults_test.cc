// Faults inside one iteration (both engines) and across a training run.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "sim/analytic_engine.h"
#include "sim/error.h"
#include "strategies/faults.h"
#include "strategies/training/horizon.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"
#include "tools/report/iteration.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

struct Job {
  platforms::Cluster cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  workloads::ModelGraph model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  Plan plan = load_plan_file(src("strategies/presets/dp8-pcie.yaml"));  // dp 8, one GPU per replica
};

FaultScenario scenario(const std::string& yaml, const platforms::Cluster& c) {
  return load_fault_scenario(ConfigNode::load_string(yaml, "scenario.yaml"), c);
}

sim::EngineOptions options_for(const std::string& engine) {
  sim::EngineOptions o;
  if (engine == "simgrid") o.fidelity = "closed";
  return o;
}

TEST(Faults, HalfSpeedStragglerMakesTheIterationAsSlowAsThatGpuAlone) {
  // Synchronous data parallelism: every replica waits for the slowest at the all-reduce.
  // Hand-worked: the straggler's compute C doubles, the all-reduce A does not, so the
  // iteration is 2C + A: that GPU alone at half speed, and never more than twice the
  // fault-free C + A.
  const Job j;
  const FaultScenario s = scenario("events:\n  - {kind: straggler, device: 3, speed: 0.5}\n", j.cluster);
  for (const std::string engine : {"analytic", "simgrid"}) {
    SCOPED_TRACE(engine);
    const FaultSimulation f = simulate_with_faults(j.model, j.cluster, j.plan, s, engine, options_for(engine));
    // C and A from the fault-free run of the same graph, on the straggler's device.
    LowerOptions lo;
    lo.distinct_gpus = {3};
    const LoweredJob job = lower(j.model, j.cluster, j.plan, lo);
    const sim::Result base = sim::engines().make(engine)->run(job.graph, j.cluster.network, options_for(engine));
    const int device = job.roles[3].device;
    double compute = 0, communication = 0;
    for (size_t i = 0; i < job.graph.size(); ++i) {
      const sim::Task& t = job.graph.task(static_cast<sim::TaskId>(i));
      const double d = base.end_s[i] - base.start_s[i];
      if (t.kind == sim::TaskKind::Compute && t.device == device) compute += d;
      if (t.kind == sim::TaskKind::Collective) communication += d;  // the one gradient all-reduce
    }
    EXPECT_NEAR(f.faults.baseline_s, compute + communication, 1e-9 * base.makespan_s);
    EXPECT_NEAR(f.faults.iteration_s, 2 * compute + communication, 1e-6 * base.makespan_s);
    EXPECT_LE(f.faults.iteration_s, 2 * f.faults.baseline_s);
    EXPECT_GT(f.faults.slowed_tasks, 0u);
    EXPECT_FALSE(f.faults.stopped);
  }
}

TEST(Faults, ALinkAtHalfBandwidthDoublesATransferLimitedByIt) {
  // Two GPUs on one switch, 1 GB over 10 GB/s links with 1 us of latency.
  sim::Network net;
  const int sw = net.add_switch("switch");
  const int a = net.add_host("gpu0"), b = net.add_host("gpu1");
  net.add_link("gpu0/up", a, sw, 10e9, 0.5e-6);
  net.add_link("gpu1/up", b, sw, 10e9, 0.5e-6);
  sim::TaskGraph g;
  const sim::DeviceId d0 = g.add_device("gpu0", {a});
  g.add_device("gpu1", {b});
  g.add_transfer(d0, g.stream("comm"), g.add_comm_set({{{a, b}}}), 1e9, g.label("send"), 0);
  g.finalize();
  for (const std::string engine : {"analytic", "simgrid"}) {
    SCOPED_TRACE(engine);
    sim::EngineOptions o = options_for(engine);
    const double clean = sim::engines().make(engine)->run(g, net, o).makespan_s;
    o.faults.link_bandwidth[1] = {sim::Window{0, INFINITY, 0.5}};  // gpu1/up
    const double slow = sim::engines().make(engine)->run(g, net, o).makespan_s;
    EXPECT_NEAR(clean, 0.1, 1e-4);
    EXPECT_NEAR(slow / clean, 2.0, 1e-4);
  }
}

TEST(Faults, ALinkDegradedMidTransferSlowsTheRestOfIt) {
  // 1 GB over 10 GB/s: 0.1 s. At 0.05 s the link drops to half: the second half takes
  // 0.1 s, so the transfer ends at 0.15 s (1.5x), on either engine.
  sim::Network net;
  const int sw = net.add_switch("switch");
  const int a = net.add_host("gpu0"), b = net.add_host("gpu1");
  net.add_link("gpu0/up", a, sw, 10e9, 0);
  net.add_link("gpu1/up", b, sw, 10e9, 0);
  sim::TaskGraph g;
  const sim::DeviceId d0 = g.add_device("gpu0", {a});
  g.add_device("gpu1", {b});
  g.add_transfer(d0, g.stream("comm"), g.add_comm_set({{{a, b}}}), 1e9, g.label("send"), 0);
  g.finalize();
  for (const std::string engine : {"analytic", "simgrid"}) {
    SCOPED_TRACE(engine);
    sim::EngineOptions o = options_for(engine);
    o.faults.link_bandwidth[1] = {sim::Window{0.05, INFINITY, 0.5}};
    EXPECT_NEAR(sim::engines().make(engine)->run(g, net, o).makespan_s, 0.15, 1e-6);
    o.faults.link_bandwidth[1] = {sim::Window{0.05, 0.07, 0.5}};  // 0.02 s at half: 0.01 s lost
    EXPECT_NEAR(sim::engines().make(engine)->run(g, net, o).makespan_s, 0.11, 1e-6);
  }
}

TEST(Faults, ALinkGoingDownUnderATransferStopsTheIterationThenOnBothEngines) {
  // 1 GB over 10 GB/s (0.1 s); the link is down from 0.05 s to 0.07 s: the transfer fails
  // at 0.05 s, and with it the iteration, on either engine (SimGrid used to abort here).
  sim::Network net;
  const int sw = net.add_switch("switch");
  const int a = net.add_host("gpu0"), b = net.add_host("gpu1");
  net.add_link("gpu0/up", a, sw, 10e9, 0);
  net.add_link("gpu1/up", b, sw, 10e9, 0);
  sim::TaskGraph g;
  const sim::DeviceId d0 = g.add_device("gpu0", {a});
  g.add_device("gpu1", {b});
  g.add_transfer(d0, g.stream("comm"), g.add_comm_set({{{a, b}}}), 1e9, g.label("send"), 0);
  g.finalize();
  for (const std::string engine : {"analytic", "simgrid"}) {
    SCOPED_TRACE(engine);
    sim::EngineOptions o = options_for(engine);
    o.faults.link_bandwidth[1] = {sim::Window{0.05, 0.07, 0}};
    const sim::Result r = sim::engines().make(engine)->run(g, net, o);
    ASSERT_TRUE(r.stopped());
    EXPECT_NEAR(r.stopped_at_s, 0.05, 1e-9);
    EXPECT_NE(r.stop_cause.find("down"), std::string::npos) << r.stop_cause;
  }
}

TEST(Faults, AFailStopInAPipelineStopsBothEnginesAndTheReportHasNoIterationTime) {
  // tp 4, pp 2 on one DGX A100: GPU 4 (stage 1) fails 10 ms in. SimGrid used to abort on
  // the transfer to the GPU that is off; both engines now stop there, and the report
  // gives no iteration time, throughput or MFU for an iteration that did not finish.
  const Job j;
  Plan plan;
  plan.tp = 4;
  plan.pp = 2;
  plan.global_batch_size = 8;
  const FaultScenario s = scenario("events:\n  - {kind: gpu_fail, device: 4, at: 10 ms}\n", j.cluster);
  for (const std::string engine : {"analytic", "simgrid"}) {
    SCOPED_TRACE(engine);
    const FaultSimulation f = simulate_with_faults(j.model, j.cluster, plan, s, engine, options_for(engine));
    ASSERT_TRUE(f.faults.stopped);
    EXPECT_DOUBLE_EQ(f.faults.stopped_at_s, 0.01);
    EXPECT_NE(f.faults.cause.find("server0/gpu4"), std::string::npos) << f.faults.cause;
    const Report& r = f.simulation.report;
    EXPECT_TRUE(r.stopped);
    EXPECT_EQ(r.mfu, 0);
    std::ostringstream json, summary;
    report::write_json(json, r);
    report::write_summary(summary, r);
    EXPECT_NE(json.str().find("\"iteration_time_s\": null"), std::string::npos);
    EXPECT_NE(summary.str().find("iteration time     none: the iteration stopped at 10 ms"), std::string::npos)
        << summary.str();
    EXPECT_EQ(summary.str().find("MFU"), std::string::npos);
  }
}

TEST(Faults, AFailStopStopsTheIterationAndSaysWhatWasLost) {
  const Job j;
  for (const std::string engine : {"analytic", "simgrid"}) {
    SCOPED_TRACE(engine);
    const FaultSimulation f = simulate_with_faults(
        j.model, j.cluster, j.plan, scenario("events:\n  - {kind: gpu_fail, device: 5, at: 0.2 s}\n", j.cluster),
        engine, options_for(engine));
    ASSERT_TRUE(f.faults.stopped);
    EXPECT_DOUBLE_EQ(f.faults.stopped_at_s, 0.2);
    EXPECT_NE(f.faults.cause.find("server0/gpu5"), std::string::npos) << f.faults.cause;
    EXPECT_GT(f.faults.tasks_done, 0u);
    EXPECT_LT(f.faults.tasks_done, f.faults.tasks_total);
    EXPECT_DOUBLE_EQ(f.faults.lost_gpu_seconds, 0.2 * 8);
  }
}

TEST(Faults, AWindowOutsideTheIterationChangesNothing) {
  const Job j;
  const FaultSimulation f = simulate_with_faults(
      j.model, j.cluster, j.plan,
      scenario("events:\n  - {kind: straggler, device: 1, speed: 0.1, from: 100 s, to: 200 s}\n", j.cluster));
  EXPECT_DOUBLE_EQ(f.faults.iteration_s, f.faults.baseline_s);
  EXPECT_EQ(f.faults.delayed_tasks, 0u);
}

TEST(Faults, BadScenariosNameTheProblem) {
  const Job j;
  struct Case {
    const char *yaml, *expected;
  };
  for (const Case& c : {
           Case{"events:\n  - {kind: gpu_fail, device: 12, at: 1 s}\n", "GPU 12 does not exist; valid: 0 to 7"},
           Case{"events:\n  - {kind: link_degrade, link: server9/nic, factor: 0.5}\n", "unknown link \"server9/nic\""},
           Case{"events:\n  - {kind: gpu_fail, device: 1, at: -2 s}\n", "a time in the past"},
           Case{"events:\n  - {kind: straggler, device: 1, speed: 0}\n", "expected a factor above 0"},
           Case{"events:\n  - {kind: link_degrade, link: server0/gpu0/nic, factor: -1}\n", "expected a factor above 0"},
           Case{"events:\n  - {kind: straggler, device: 1, speed: 0.5, from: 2 s, to: 1 s}\n", "ends before it starts"},
           Case{"events:\n  - {kind: meteor, device: 1}\n", "kind"},
           Case{"events:\n  - {kind: gpu_fail, device: 1, at: 1 s, speed: 2}\n", "speed"},
           Case{"events:\n  - {kind: gpu_fail, device: 1, at: 1}\n", "at"},
       }) {
    try {
      scenario(c.yaml, j.cluster);
      ADD_FAILURE() << "accepted: " << c.yaml;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("scenario.yaml:"), std::string::npos) << e.what();
    }
  }
}

// A run of one-second iterations with failures at rate 1/2000 s, checkpoints of 20 s and
// 30 s of downtime plus the 20 s load after each failure.
HorizonInputs run_of(double interval_s, long iterations) {
  HorizonInputs in;
  in.iteration_s = 1;
  in.iterations = iterations;
  in.gpus = 8;
  in.checkpoint_bytes = 20e9;
  in.storage_Bps = 1e9;  // C = 20 s
  in.scenario.seed = 3;
  in.scenario.mtbf_s = 8 * 2000.0;  // per GPU: the job fails every 2000 s
  in.scenario.recovery.interval_s = interval_s;
  in.scenario.recovery.restart_s = 30;
  return in;
}

TEST(Horizon, GoodputMatchesTheClosedFormForAFixedInterval) {
  // E(t) = (1/L + R)(exp(L (t + C)) - 1), goodput t / E(t); the Monte Carlo run meets it.
  const double L = 1 / 2000.0, C = 20, R = 30 + 20, t = 300;
  const double closed = t / ((1 / L + R) * std::expm1(L * (t + C)));
  const HorizonResult r = run_horizon(run_of(t, 4000000));  // about 2,000 failures
  EXPECT_NEAR(r.expected_goodput, closed, 1e-12);
  EXPECT_NEAR(r.goodput, closed, 0.01) << r.failures << " failures";
  EXPECT_GT(r.failures, 1000);
  EXPECT_NEAR(r.failure_rate_per_s, L, 1e-15);
}

TEST(Horizon, BestIntervalIsYoungsWithinTenPercent) {
  const HorizonResult r = run_horizon(run_of(0, 100000));
  const double young = std::sqrt(2 * 20 / (1 / 2000.0));  // 283 s
  EXPECT_NEAR(r.young_interval_s, young, 1e-9);
  EXPECT_NEAR(r.best_interval_s, young, 0.1 * young) << r.best_interval_s;
  EXPECT_NEAR(r.interval_s, std::round(r.best_interval_s), 1e-9);  // whole iterations
  // And it is the best: intervals a third and three times as long do worse.
  const double g = r.expected_goodput;
  for (double k : {1.0 / 3, 3.0}) {
    const HorizonResult other = run_horizon(run_of(k * r.best_interval_s, 100000));
    EXPECT_LT(other.expected_goodput, g);
  }
}

TEST(Horizon, SameSeedSameRunAndSparesShortenDowntime) {
  HorizonInputs in = run_of(300, 400000);
  const HorizonResult a = run_horizon(in), b = run_horizon(in);
  EXPECT_EQ(a.wall_s, b.wall_s);
  EXPECT_EQ(a.failures, b.failures);
  in.scenario.recovery.policy = "spares";
  in.scenario.recovery.spares = 1000;
  in.scenario.recovery.swap_s = 5;
  const HorizonResult s = run_horizon(in);
  EXPECT_EQ(s.spares_used, s.failures);
  EXPECT_NEAR(s.downtime_s, s.failures * (5 + 20.0), 1e-6);
  EXPECT_LT(s.wall_s, a.wall_s);
}

TEST(Horizon, ElasticContinuesOnFewerGpusUntilNoPlanFits) {
  HorizonInputs in = run_of(300, 400000);
  in.scenario.recovery.policy = "elastic";
  in.gpus = 32;
  in.scenario.mtbf_s = 32 * 2000.0;
  in.gpus_per_server = 8;
  // The re-chosen plan: one server fewer each time, iterations a little slower; none
  // fits below two servers.
  in.elastic_plan = [](int lost) -> std::pair<double, int> {
    const int servers = 4 - lost;
    if (servers < 2) return {-1, 0};
    return {4.0 / servers, servers * 8};
  };
  const HorizonResult r = run_horizon(in);
  EXPECT_EQ(r.servers_lost, r.failures);
  EXPECT_EQ(r.failures, 3);  // the third failure leaves one server: no plan
  EXPECT_FALSE(r.stopped.empty());
  EXPECT_LT(r.iterations_done, r.iterations);
}

}  // namespace
}  // namespace dejavu::strategies
