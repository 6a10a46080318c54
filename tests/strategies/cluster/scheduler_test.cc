// The scheduler over a trace (issue 24), hand-worked on servers of one GPU with no
// latency: GPT-3 1.3B jobs of one GPU communicate nothing, so each steps at its time alone,
// s, read from one simulation; every expected time below is built from s by hand.
#include <gtest/gtest.h>

#include "sim/config_node.h"
#include "strategies/cluster/scheduler.h"
#include "strategies/simulate.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies::cluster {
namespace {

using dejavu::testing::src;

platforms::Cluster one_gpu_servers(int n, int per_server = 1) {
  // Checkpoints cost (model states over 1000 TB/s) about 20 us: nothing next to s.
  return platforms::load_cluster(
      ConfigNode::load_string("servers:\n  - count: " + std::to_string(n) +
                                  "\n    gpu: A100-SXM-80GB\n    gpus_per_server: " + std::to_string(per_server) +
                                  "\n"
                                  "    intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 0 us}\n"
                                  "    nic: {bandwidth: 100 Gbps, latency: 0 us}\n"
                                  "network: {kind: fat-tree, latency: 0 us}\nstorage: {bandwidth: 1000 TB/s}\n",
                              "servers.yaml"));
}

struct Jobs {
  std::shared_ptr<const workloads::ModelGraph> model = std::make_shared<const workloads::ModelGraph>(
      workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml")));
  Trace trace;
  void add(const std::string& name, double submit, int gpus, long long iterations) {
    TraceJob j;
    j.name = name;
    j.submit_s = submit;
    j.gpus = j.plan.dp = gpus;
    j.plan.global_batch_size = gpus;
    j.model = model;
    j.iterations = iterations;
    trace.jobs.push_back(j);
  }
  double step(int gpus, const platforms::Cluster& c) const {
    Plan p;
    p.dp = p.global_batch_size = gpus;
    platforms::Cluster sub = c;
    sub.gpus.resize(static_cast<size_t>(gpus));
    return simulate(*model, sub, p).report.iteration_time_s;
  }
};

TEST(Scheduler, FirstComeFirstServedWaitsForTheWholeClusterJob) {
  const platforms::Cluster c = one_gpu_servers(2);
  Jobs j;
  j.add("a", 0, 2, 100);
  j.add("b", 1, 1, 10);
  j.add("c", 2, 1, 30);
  const double s1 = j.step(1, c), s2 = j.step(2, c);
  const ScheduleResult r = run_schedule(j.trace, c, {});
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_NEAR(r.jobs[0].end_s, 100 * s2, 1e-9 * s2);
  EXPECT_NEAR(r.jobs[1].start_s, 100 * s2, 1e-9 * s2);  // both wait for a, then start together
  EXPECT_NEAR(r.jobs[2].start_s, 100 * s2, 1e-9 * s2);
  EXPECT_NEAR(r.jobs[1].queue_s(), 100 * s2 - 1, 1e-9 * s2);
  EXPECT_NEAR(r.jobs[2].jct_s(), 100 * s2 + 30 * s1 - 2, 1e-9 * s2);
  EXPECT_NEAR(r.makespan_s, 100 * s2 + 30 * s1, 1e-9 * s2);
  // GPU time held: a's 2 x 100 s2, b's 10 s1, c's 30 s1; nothing lost, nobody slowed.
  EXPECT_NEAR(r.utilisation, (200 * s2 + 40 * s1) / (2 * r.makespan_s), 1e-9);
  EXPECT_NEAR(r.goodput, 1, 1e-9);
  EXPECT_NEAR(r.jobs[2].slowdown(), r.jobs[2].jct_s() / (30 * s1), 1e-12);
}

FaultScenario failure(const platforms::Cluster& c, const std::string& recovery) {
  return load_fault_scenario(ConfigNode::load_string("events:\n  - {kind: gpu_fail, device: 0, at: 1000 s}\n"
                                                     "recovery: " +
                                                         recovery + "\n",
                                                     "f.yaml"),
                             c);
}

TEST(Scheduler, AFailedJobRollsBackToItsCheckpointAndWaitsForItsGpu) {
  // One GPU: the job fails at 1000 s, its last checkpoint at 900 s (every 300 s of
  // running); the GPU is back 3600 s later, and the job 600 s after that, with the
  // work of 900 s done.
  const platforms::Cluster c = one_gpu_servers(1);
  Jobs j;
  j.add("a", 0, 1, 20000);
  const double s = j.step(1, c);
  const FaultScenario f = failure(c, "{policy: checkpoint, interval: 300 s, restart: 600 s}");
  ScheduleOptions o;
  o.faults = &f;
  o.repair_s = 3600;
  const ScheduleResult r = run_schedule(j.trace, c, o);
  ASSERT_GT(20000 * s, 1000);
  EXPECT_EQ(r.failures, 1);
  EXPECT_EQ(r.jobs[0].failures, 1);
  EXPECT_NEAR(r.jobs[0].lost_s, 100, 1e-4);
  EXPECT_NEAR(r.jobs[0].end_s, 1000 + 3600 + 600 + (20000 * s - 900), 1e-3);  // + ten checkpoint writes of ~20 us
  // Held: 1000 s, then from the restart on; useful: the 20000 steps.
  EXPECT_NEAR(r.goodput, 20000 * s / (1000 + 600 + 20000 * s - 900), 1e-6);
}

TEST(Scheduler, ASpareGpuTakesTheFailedOnesPlaceAfterTheSwap) {
  const platforms::Cluster c = one_gpu_servers(2);
  Jobs j;
  j.add("a", 0, 1, 20000);
  const double s = j.step(1, c);
  const FaultScenario f = failure(c, "{policy: spares, interval: 300 s, swap: 60 s}");
  ScheduleOptions o;
  o.faults = &f;
  const ScheduleResult r = run_schedule(j.trace, c, o);
  EXPECT_NEAR(r.jobs[0].end_s, 1000 + 60 + (20000 * s - 900), 1e-3);  // + ten checkpoint writes of ~20 us
}

TEST(Scheduler, ElasticRecoveryGoesOnWithoutTheFailedServer) {
  // Two servers of two GPUs: a dp4 job (global batch 4) loses GPU 0 at 1000 s; it goes on
  // as dp2 on server 1's GPUs after the 600 s restart, from its 900 s checkpoint, each
  // step then the dp2 step (two microbatches a replica).
  const platforms::Cluster c = one_gpu_servers(2, 2);
  Jobs j;
  j.add("a", 0, 4, 5000);
  j.trace.jobs[0].plan.global_batch_size = 4;
  Plan dp4 = j.trace.jobs[0].plan, dp2 = dp4;
  dp2.dp = 2;
  platforms::Cluster first = c, second = c;
  first.gpus.resize(4);
  second.gpus = {c.gpus[2], c.gpus[3]};
  const double s4 = simulate(*j.model, first, dp4).report.iteration_time_s;
  const double s2 = simulate(*j.model, second, dp2).report.iteration_time_s;
  const FaultScenario f = failure(c, "{policy: elastic, interval: 300 s, restart: 600 s}");
  ScheduleOptions o;
  o.faults = &f;
  const ScheduleResult r = run_schedule(j.trace, c, o);
  ASSERT_GT(5000 * s4, 1000);
  const double done = 900 / s4;  // steps its checkpoint holds
  EXPECT_NEAR(r.jobs[0].end_s, 1000 + 600 + (5000 - done) * s2, 1e-3);
  EXPECT_EQ(r.jobs[0].failures, 1);
}

}  // namespace
}  // namespace dejavu::strategies::cluster
