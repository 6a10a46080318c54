#include "sim/stream_scheduler.h"

#include <algorithm>

#include "sim/error.h"

namespace dejavu::sim {

template <class F>
void StreamScheduler::for_each_queue(const Task& t, F&& fn) const {
  if (t.kind == TaskKind::Collective) {
    for (int d : g_.participants(t.participants)) fn(static_cast<size_t>(d) * streams_ + t.stream);
  } else {
    fn(static_cast<size_t>(t.device) * streams_ + t.stream);
  }
}

StreamScheduler::StreamScheduler(const TaskGraph& g) : g_(g) {
  if (g.indegree().size() != g.size()) throw ModelError("the task graph was not finalized");
  streams_ = std::max<int>(1, static_cast<int>(g.stream_names().size()));
  queues_.resize(g.devices().size() * streams_);
  for (size_t i = 0; i < g.size(); ++i)
    for_each_queue(g.task(static_cast<TaskId>(i)), [&](size_t q) { queues_[q].push_back(static_cast<TaskId>(i)); });
  head_.assign(queues_.size(), 0);
  busy_.assign(queues_.size(), 0);
  waiting_ = g.indegree();
  started_.assign(g.size(), 0);
}

void StreamScheduler::try_start(TaskId id, std::vector<TaskId>& out) {
  if (waiting_[id] > 0 || started_[id]) return;
  bool ok = true;
  for_each_queue(g_.task(id),
                 [&](size_t q) { ok = ok && !busy_[q] && head_[q] < queues_[q].size() && queues_[q][head_[q]] == id; });
  if (!ok) return;
  for_each_queue(g_.task(id), [&](size_t q) { busy_[q] = 1; });
  started_[id] = 1;
  out.push_back(id);
}

std::vector<TaskId> StreamScheduler::initial() {
  std::vector<TaskId> out;
  for (auto& q : queues_)
    if (!q.empty()) try_start(q[0], out);
  return out;
}

void StreamScheduler::finish(TaskId id, std::vector<TaskId>& startable) {
  ++finished_;
  const Task& t = g_.task(id);
  for_each_queue(t, [&](size_t q) {
    busy_[q] = 0;
    ++head_[q];
  });
  const auto& begin = g_.succ_begin();
  const auto& succ = g_.successors();
  for (int32_t k = begin[id]; k < begin[id + 1]; ++k)
    if (--waiting_[succ[k]] == 0) try_start(succ[k], startable);
  for_each_queue(t, [&](size_t q) {
    if (head_[q] < queues_[q].size()) try_start(queues_[q][head_[q]], startable);
  });
}

void StreamScheduler::check_all_finished() const {
  if (finished_ == g_.size()) return;
  for (size_t i = 0; i < g_.size(); ++i) {
    if (started_[i]) continue;
    const Task& t = g_.task(static_cast<TaskId>(i));
    throw ModelError(std::to_string(g_.size() - finished_) +
                     " tasks never ran: the dependencies form a cycle or contradict the stream "
                     "order; first stuck task: \"" +
                     g_.labels().at(t.label) + "\" on " + g_.devices().at(t.device).name + "/" +
                     g_.stream_names().at(t.stream));
  }
  throw ModelError(std::to_string(g_.size() - finished_) + " tasks started but never finished");
}

}  // namespace dejavu::sim
