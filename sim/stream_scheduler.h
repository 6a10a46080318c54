// The bookkeeping every engine shares: dependency counters and in-order (device, stream)
// queues. A task may start once all its dependencies finished and it is at the head of
// every queue it occupies while those queues are idle. Engines decide only *when* a
// started task finishes.
#pragma once

#include <vector>

#include "sim/task_graph.h"

namespace dejavu::sim {

class StreamScheduler {
 public:
  explicit StreamScheduler(const TaskGraph& graph);

  // Tasks that can start at time zero; they are marked started.
  std::vector<TaskId> initial();
  // Marks `id` finished and appends the tasks that can start now (marked started).
  void finish(TaskId id, std::vector<TaskId>& startable);

  size_t finished() const { return finished_; }
  // Throws ModelError naming the first task that never ran, if any.
  void check_all_finished() const;

 private:
  template <class F>
  void for_each_queue(const Task& t, F&& fn) const;
  void try_start(TaskId id, std::vector<TaskId>& out);

  const TaskGraph& g_;
  int streams_ = 1;
  std::vector<std::vector<TaskId>> queues_;
  std::vector<size_t> head_;
  std::vector<char> busy_;
  std::vector<int32_t> waiting_;
  std::vector<char> started_;
  size_t finished_ = 0;
};

}  // namespace dejavu::sim
