#include "sim/analytic_engine.h"

#include <map>
#include <queue>
#include <tuple>

#include "sim/collective.h"
#include "sim/error.h"

namespace dejavu::sim {

namespace {

// Durations of communication tasks, priced once per distinct (comm set, op, size), and
// the link load they add, accumulated per (comm set, kind, op) and spread at the end:
// pricing and load are linear in bytes, and tasks repeat the same groups many times.
class CommPricer {
 public:
  CommPricer(const TaskGraph& g, const Network& net, const CollectiveAlgorithm& algo)
      : g_(g), net_(net), algo_(algo) {}

  double duration(const Task& t) {
    if (t.kind == TaskKind::Compute) return t.duration_s;
    auto key = std::make_tuple(t.comm_set, static_cast<int>(t.kind), static_cast<int>(t.op),
                               t.bytes);
    bytes_[std::make_tuple(t.comm_set, static_cast<int>(t.kind), static_cast<int>(t.op))] +=
        t.bytes;
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    const std::vector<int>& group = g_.comm_set(t.comm_set).groups.at(0);
    double d = 0;
    if (t.kind == TaskKind::Transfer) {
      d = transfer_time_s(net_, group.at(0), group.at(1), t.bytes);
    } else {
      d = algo_.time_s(net_, group, t.op, t.bytes);
    }
    cache_.emplace(key, d);
    return d;
  }

  std::vector<double> link_bytes() const {
    std::vector<double> load(2 * net_.link_count(), 0.0);
    for (const auto& [key, total] : bytes_) {
      const auto [set, kind, op] = key;
      for (const auto& group : g_.comm_set(set).groups) {
        if (static_cast<TaskKind>(kind) == TaskKind::Transfer)
          add_transfer_load(net_, group.at(0), group.at(1), total, load);
        else
          algo_.add_link_load(net_, group, static_cast<CollectiveOp>(op), total, load);
      }
    }
    return load;
  }

 private:
  const TaskGraph& g_;
  const Network& net_;
  const CollectiveAlgorithm& algo_;
  std::map<std::tuple<int, int, int, double>, double> cache_;
  std::map<std::tuple<int, int, int>, double> bytes_;
};

}  // namespace

Result AnalyticEngine::run(const TaskGraph& g, const Network& net,
                           const EngineOptions& options) const {
  const auto algo = collective_algorithms().make(options.collective_algorithm);
  CommPricer pricer(g, net, *algo);
  const size_t n = g.size();
  if (g.indegree().size() != n) throw ModelError("the task graph was not finalized");
  const int streams = static_cast<int>(g.stream_names().size());
  const size_t queue_count = g.devices().size() * static_cast<size_t>(std::max(streams, 1));

  // Each (device, stream) is a queue holding its tasks in insertion order.
  std::vector<std::vector<TaskId>> queues(queue_count);
  auto for_each_queue = [&](const Task& t, auto&& fn) {
    if (t.kind == TaskKind::Collective) {
      for (int d : g.participants(t.participants)) fn(static_cast<size_t>(d) * streams + t.stream);
    } else {
      fn(static_cast<size_t>(t.device) * streams + t.stream);
    }
  };
  std::vector<double> duration(n);
  for (size_t i = 0; i < n; ++i) {
    const Task& t = g.task(static_cast<TaskId>(i));
    duration[i] = pricer.duration(t);
    for_each_queue(t, [&](size_t q) { queues[q].push_back(static_cast<TaskId>(i)); });
  }

  std::vector<size_t> head(queue_count, 0);
  std::vector<char> busy(queue_count, 0);
  std::vector<int32_t> waiting(g.indegree());
  Result r;
  r.engine = "analytic";
  r.start_s.assign(n, -1.0);
  r.end_s.assign(n, -1.0);

  using Event = std::tuple<double, uint64_t, TaskId>;  // end time, sequence, task
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  uint64_t seq = 0;

  auto try_start = [&](TaskId id, double now) {
    if (waiting[id] > 0 || r.start_s[id] >= 0) return;
    bool ok = true;
    for_each_queue(g.task(id), [&](size_t q) {
      ok = ok && !busy[q] && head[q] < queues[q].size() && queues[q][head[q]] == id;
    });
    if (!ok) return;
    for_each_queue(g.task(id), [&](size_t q) { busy[q] = 1; });
    r.start_s[id] = now;
    r.end_s[id] = now + duration[id];
    events.emplace(r.end_s[id], seq++, id);
  };

  for (size_t q = 0; q < queue_count; ++q)
    if (!queues[q].empty()) try_start(queues[q][0], 0.0);

  size_t done = 0;
  const auto& begin = g.succ_begin();
  const auto& succ = g.successors();
  while (!events.empty()) {
    const auto [now, s, id] = events.top();
    events.pop();
    ++done;
    r.makespan_s = std::max(r.makespan_s, now);
    for_each_queue(g.task(id), [&](size_t q) {
      busy[q] = 0;
      ++head[q];
    });
    for (int32_t k = begin[id]; k < begin[id + 1]; ++k)
      if (--waiting[succ[k]] == 0) try_start(succ[k], now);
    for_each_queue(g.task(id), [&](size_t q) {
      if (head[q] < queues[q].size()) try_start(queues[q][head[q]], now);
    });
  }

  if (done != n) {
    for (size_t i = 0; i < n; ++i) {
      if (r.start_s[i] < 0) {
        const Task& t = g.task(static_cast<TaskId>(i));
        throw ModelError(std::to_string(n - done) +
                         " tasks never ran: the dependencies form a cycle or contradict the "
                         "stream order; first stuck task: \"" +
                         g.labels().at(t.label) + "\" on " + g.devices().at(t.device).name +
                         "/" + g.stream_names().at(t.stream));
      }
    }
  }
  r.link_bytes = pricer.link_bytes();
  return r;
}

}  // namespace dejavu::sim
