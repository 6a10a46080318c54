// The contention suite (issue 21, tests/fixtures/contention/cases.txt): data-parallel sync
// topologies whose transfers meet on shared NICs (eight one-GPU A100 servers with a 100 Gb/s
// NIC each, GPT-3 1.3B, dp8); two servers of two GPUs sharing one NIC, also with that NIC
// halved mid-transfer; expert all-to-alls of two groups over a 4:1 oversubscribed spine; a
// gradient all-reduce meeting pipeline sends. The analytic engine must agree with SimGrid's
// flow-level model within 5% on every case; priced alone (analytic-no-contention) it does
// not where transfers meet. Hand-worked: one parameter server's NIC carries 7 pushes in,
// then 7 pulls out, each the whole gradient. Presets where no two transfers meet on a link
// (read from the run without sharing) keep their answer to 1e-9; where they meet, sharing
// never makes a step faster.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "bench/contention_suite.h"
#include "tests/snapshot_cases.h"

namespace dejavu::strategies {
namespace {

using bench::ContentionCase;

struct Times {
  double simgrid, analytic, alone;
};

Times times(const ContentionCase& c) {
  return {bench::contention_case_s(c, "simgrid"), bench::contention_case_s(c, "analytic"),
          bench::contention_case_s(c, "analytic-no-contention")};
}

std::map<std::string, ContentionCase> cases() {
  std::map<std::string, ContentionCase> out;
  for (const ContentionCase& c : bench::contention_cases(DEJAVU_SOURCE_DIR)) out[c.name] = c;
  return out;
}

TEST(Contention, EveryCaseAgreesWithSimGridWithinFivePercent) {
  const auto all = cases();
  ASSERT_EQ(all.size(), 11u);
  for (const auto& [name, c] : all) {
    SCOPED_TRACE(name);
    const Times t = times(c);
    EXPECT_NEAR(t.analytic, t.simgrid, 0.05 * t.simgrid);
    // Every case but the all-reduce contends: priced alone, it is fast by more than 1%.
    if (name != "all-reduce") {
      EXPECT_GT(t.simgrid - t.alone, 0.01 * t.simgrid);
    }
  }
}

TEST(Contention, WhereNothingMeetsSharingChangesNothing) {
  // One ring all-reduce over eight NICs: each link carries one flow each way.
  const Times t = times(cases().at("all-reduce"));
  EXPECT_NEAR(t.analytic, t.alone, 1e-9 * t.alone);
}

TEST(Contention, OneParameterServersNicCarriesEveryPushThenEveryPull) {
  // Priced alone, 7 pushes cost one and 7 pulls one; shared, the server's 12.5 GB/s NIC
  // carries 6 more of each, 2 bytes of gradient per parameter, all on the critical path.
  const ContentionCase c = cases().at("ps1");
  const Times ps = times(c);
  const double queued = 2 * 6 * (2 * workloads::load_workload_file(c.workload).parameter_count()) / 12.5e9;
  EXPECT_NEAR(ps.analytic - ps.alone, queued, 1e-3 * queued);
}

TEST(Contention, ANicHalvedMidTransferSlowsTheRestOfIt) {
  // tp2 dp2's gradient all-reduce crosses server0's one NIC from just after 1.0 s. Halved
  // from 1.0 s, all of it runs at half speed; from 1.1 s (the suite's case), only what is
  // left then: the step is slower than without the window and faster than halved throughout.
  ContentionCase c = cases().at("shared-nic-halved");
  const double mid = bench::contention_case_s(c, "analytic");
  const std::string before = ::testing::TempDir() + "/nic-halved-at-1.0s.faults.yaml";
  std::ofstream(before) << "events:\n  - {kind: link_degrade, link: server0/nic, factor: 0.5, from: 1.0 s}\n";
  c.faults = before;
  const double whole = bench::contention_case_s(c, "analytic");
  c.faults.clear();
  const double clean = bench::contention_case_s(c, "analytic");
  EXPECT_GT(mid, clean + 0.01);
  EXPECT_LT(mid, whole - 0.01);
}

TEST(Contention, TheReportSaysHowLongFlowsWereInFlightAndHowManyAtOnce) {
  // One parameter server: its NIC sends the 7 pulls at once, 7 whole gradients (2 bytes a
  // parameter) at 12.5 GB/s, so flows are in flight on it for 7 x that long (plus latency),
  // and no link is ever busier than the whole step. Both engines count the same.
  const ContentionCase c = cases().at("ps1");
  const auto model = workloads::load_workload_file(c.workload);
  sim::EngineOptions isolated;
  isolated.isolate = true;  // SimGrid runs once per process
  for (const char* engine : {"analytic", "simgrid"}) {
    SCOPED_TRACE(engine);
    const Simulation s =
        simulate(model, platforms::load_cluster_file(c.platform), load_plan_file(c.plan), engine, isolated);
    const LinkReport& l = s.report.busiest_link;
    EXPECT_EQ(l.name, "server0/gpu0/nic");
    EXPECT_EQ(l.peak_flows, 7);
    const double pulls = 7 * 2 * model.parameter_count() / 12.5e9;
    EXPECT_NEAR(l.bytes, 7 * 2 * model.parameter_count(), 1e-6 * l.bytes);
    EXPECT_NEAR(l.in_flight_s, pulls, 1e-3 * pulls);
    for (const LinkReport& k : s.report.links) EXPECT_LE(k.in_flight_s, s.report.iteration_time_s);
  }
  const Simulation alone =
      simulate(model, platforms::load_cluster_file(c.platform), load_plan_file(c.plan), "analytic-no-contention");
  EXPECT_EQ(alone.report.busiest_link.in_flight_s, -1);  // not tracked there
}

// Whether any two communication tasks of a run overlap in time on a link one of them may
// load (every route between two GPUs of one of its groups: a superset), or one task's groups
// share such a link among themselves. Read from the run without sharing, so it does not
// depend on the sharing code it is used to check.
bool transfers_meet(const sim::TaskGraph& g, const sim::Network& net, const sim::Result& alone) {
  std::vector<std::vector<int>> links_of(g.comm_sets().size());
  std::vector<char> self_meets(g.comm_sets().size(), 0);
  for (size_t c = 0; c < links_of.size(); ++c) {
    std::map<int, int> groups_on;  // link -> groups that may load it
    for (const auto& group : g.comm_set(static_cast<int>(c)).groups) {
      std::set<int> mine;
      for (int a : group)
        for (int b : group)
          if (a != b)
            for (const sim::Hop& h : net.route(a, b)) mine.insert(h.link);
      for (int l : mine) self_meets[c] |= ++groups_on[l] > 1;
    }
    for (const auto& [l, n] : groups_on) links_of[c].push_back(l);
  }
  struct Edge {
    double t;
    int delta;
    size_t task;
  };
  std::vector<Edge> edges;
  for (size_t i = 0; i < g.size(); ++i) {
    const sim::Task& t = g.task(static_cast<sim::TaskId>(i));
    if (t.kind == sim::TaskKind::Compute || alone.end_s[i] <= alone.start_s[i]) continue;
    if (self_meets[t.comm_set]) return true;
    edges.push_back({alone.start_s[i], +1, i});
    edges.push_back({alone.end_s[i], -1, i});
  }
  std::sort(edges.begin(), edges.end(),
            [](const Edge& a, const Edge& b) { return a.t != b.t ? a.t < b.t : a.delta < b.delta; });
  std::vector<int> busy(net.link_count(), 0);
  for (const Edge& e : edges)
    for (int l : links_of[g.task(static_cast<sim::TaskId>(e.task)).comm_set]) {
      if (e.delta > 0 && busy[l] > 0) return true;
      busy[l] += e.delta;
    }
  return false;
}

TEST(Contention, PresetsWhereNothingMeetsKeepTheirAnswerTo1e9) {
  // Every analytic preset of the snapshot cases (tests/snapshots/cases.txt) without faults.
  int quiet = 0, busy = 0;
  for (const testing::SnapshotCase& c : testing::analytic_simulate_cases()) {
    SCOPED_TRACE(c.file);
    const auto model = workloads::load_workload_file(testing::case_path(c, "--workload"));
    const auto cluster = platforms::load_cluster_file(testing::case_path(c, "--platform"));
    // Links shared alone: every kernel keeps the whole GPU (comm_sms 0). With SMs shared too
    // (the plan's own comm_sms), a step is never faster.
    Plan plan = load_plan_file(testing::case_path(c, "--plan"));
    const double sms_shared = simulate(model, cluster, plan, "analytic").report.iteration_time_s;
    plan.comm_sms = 0;
    const Simulation alone = simulate(model, cluster, plan, "analytic-no-contention");
    const double shared = simulate(model, cluster, plan, "analytic").report.iteration_time_s;
    EXPECT_GE(sms_shared, shared * (1 - 1e-9));
    if (transfers_meet(alone.job.graph, cluster.network, alone.result)) {
      ++busy;
      EXPECT_GE(shared, alone.report.iteration_time_s * (1 - 1e-9));
    } else {
      ++quiet;
      EXPECT_NEAR(shared, alone.report.iteration_time_s, 1e-9 * shared);
    }
  }
  EXPECT_GE(quiet, 4);
  EXPECT_GE(busy, 4);
  std::printf("%d presets where nothing meets, %d where transfers meet\n", quiet, busy);
}

}  // namespace
}  // namespace dejavu::strategies
