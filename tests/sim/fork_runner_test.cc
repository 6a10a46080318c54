#include "sim/fork_runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>

#include "sim/analytic_engine.h"
#include "sim/error.h"
#include "sim/simgrid_engine.h"

namespace dejavu::sim {
namespace {

TaskGraph small_graph() {
  TaskGraph g;
  const sim::DeviceId d = g.add_device("gpu0", {0});
  const sim::StreamId c = g.stream("compute");
  const TaskId a = g.add_compute(d, c, 1.5, g.label("a"), 0);
  const TaskId b = g.add_compute(d, c, 2.25, g.label("b"), 0);
  g.depend(a, b);
  g.finalize();
  return g;
}

TEST(ForkRunner, ReturnsTheSameResultAsAnInProcessRun) {
  Network net;
  net.add_host("gpu0");
  const TaskGraph g = small_graph();
  const Result here = AnalyticEngine().run(g, net, {});
  const Result there = run_in_child([&] { return AnalyticEngine().run(g, net, {}); });
  EXPECT_EQ(there.engine, here.engine);
  EXPECT_EQ(there.makespan_s, here.makespan_s);
  EXPECT_EQ(there.start_s, here.start_s);
  EXPECT_EQ(there.end_s, here.end_s);
  EXPECT_EQ(there.link_bytes, here.link_bytes);
}

TEST(ForkRunner, ACrashingChildIsAnErrorForThatRunOnly) {
  EXPECT_THROW(run_in_child([]() -> Result {
                 std::raise(SIGSEGV);
                 return {};
               }),
               Error);
  // and the caller goes on
  EXPECT_EQ(run_in_child([] {
              Result r;
              r.makespan_s = 7;
              return r;
            }).makespan_s,
            7);
}

TEST(ForkRunner, AHangingChildTimesOut) {
  try {
    run_in_child(
        []() -> Result {
          for (;;) ::pause();
        },
        0.3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did not finish within"), std::string::npos) << e.what();
  }
}

TEST(ForkRunner, ModelErrorsKeepTheirKind) {
  EXPECT_THROW(run_in_child([]() -> Result { throw ModelError("cycle"); }), ModelError);
}

TEST(SimGridEngine, RunsOncePerProcessAndSaysSoTheSecondTime) {
  Network net;
  net.add_host("gpu0");
  const TaskGraph g = small_graph();
  EngineOptions in_process;
  in_process.isolate = false;
  try {
    run_in_child([&] {
      SimGridEngine::run_here(g, net, in_process);
      return SimGridEngine::run_here(g, net, in_process);
    });
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("once per process"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dejavu::sim
