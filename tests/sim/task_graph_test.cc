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

}  // namespace
}  // namespace dejavu::sim
