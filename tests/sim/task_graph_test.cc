#include "sim/task_graph.h"

#include <gtest/gtest.h>

#include <type_traits>

namespace dejavu::sim {
namespace {

// Ids of different parts do not mix, and a bare int becomes one only when said so: a
// stream passed where a device goes, or the arguments of add_collective swapped, does not
// compile.
static_assert(!std::is_convertible_v<int, DeviceId>);
static_assert(!std::is_convertible_v<StreamId, DeviceId>);
static_assert(!std::is_convertible_v<DeviceId, StreamId>);
static_assert(!std::is_convertible_v<CommSetId, ParticipantsId>);
static_assert(!std::is_convertible_v<LabelId, CommSetId>);
static_assert(
    !std::is_invocable_v<decltype(&TaskGraph::add_compute), TaskGraph&, StreamId, DeviceId, double, LabelId, int>);
static_assert(
    std::is_invocable_v<decltype(&TaskGraph::add_compute), TaskGraph&, DeviceId, StreamId, double, LabelId, int>);

TEST(TaskGraph, PartsGetConsecutiveIdsAndTasksKeepTheirTag) {
  TaskGraph g;
  const DeviceId a = g.add_device("a", {0}), b = g.add_device("b", {1});
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1);
  const StreamId compute = g.stream("compute");
  EXPECT_EQ(g.stream("comm"), 1);
  EXPECT_EQ(g.stream("compute"), compute);  // a name is one stream
  EXPECT_EQ(g.label("x"), g.label("x"));    // interned
  const TaskId t = g.add_compute(b, compute, 2.0, g.label("x"), 7);
  const TaskId u = g.add_collective(g.add_participants({a, b}), g.stream("comm"), CollectiveOp::AllReduce,
                                    g.add_comm_set(CommSet{{{0, 1}}}), 64, g.label("ar"), -1);
  g.depend(t, u);
  g.finalize();
  EXPECT_EQ(g.task(t).tag, 7);
  EXPECT_EQ(g.task(t).device, 1);
  EXPECT_EQ(g.task(u).tag, -1);
  EXPECT_EQ(g.devices_of(g.task(u)), (std::vector<int>{0, 1}));
  EXPECT_THROW(g.depend(t, t), std::exception);
}

TEST(TaskGraph, AppendedGraphKeepsItsPartsUnderNewIds) {
  TaskGraph job;
  const DeviceId a = job.add_device("a", {4}), b = job.add_device("b", {5});
  const TaskId t = job.add_compute(b, job.stream("compute"), 1.0, job.label("fwd"), 3);
  const TaskId u = job.add_collective(job.add_participants({a, b}), job.stream("dp"), CollectiveOp::AllGather,
                                      job.add_comm_set(CommSet{{{4, 5}}}), 8, job.label("ag"), -1);
  job.depend(t, u);
  job.finalize();

  TaskGraph g;
  g.add_device("x", {0});
  const TaskId first = g.add_compute(DeviceId(0), g.stream("dp"), 2.0, g.label("ag"), -1);
  g.add_comm_set(CommSet{{{0, 1}}});
  EXPECT_EQ(g.append(job, "j/"), first + 1);
  EXPECT_EQ(g.append(job, "k/"), first + 3);
  g.finalize();
  ASSERT_EQ(g.size(), 5u);
  EXPECT_EQ(g.devices()[2].name, "j/b");
  EXPECT_EQ(g.devices()[4].name, "k/b");
  EXPECT_EQ(g.devices()[4].hosts, (std::vector<int>{5}));
  const Task &t2 = g.task(first + 3), &u2 = g.task(first + 4);
  EXPECT_EQ(t2.device, 4);
  EXPECT_EQ(t2.tag, 3);
  EXPECT_EQ(g.stream_names()[t2.stream], "compute");
  EXPECT_EQ(g.stream_names()[u2.stream], "dp");  // merged by name with g's own
  EXPECT_EQ(g.labels()[u2.label], "ag");
  EXPECT_EQ(g.devices_of(u2), (std::vector<int>{3, 4}));
  EXPECT_EQ(g.comm_set(u2.comm_set).groups, (std::vector<std::vector<int>>{{4, 5}}));
  EXPECT_EQ(g.indegree()[first + 4], 1);
  EXPECT_EQ(g.successors()[g.succ_begin()[first + 3]], first + 4);
  EXPECT_EQ(g.indegree()[first + 2], 1);  // the first copy's edge too
}

}  // namespace
}  // namespace dejavu::sim
