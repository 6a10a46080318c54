#include "sim/analytic_engine.h"

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>

#include "sim/collective.h"
#include "sim/error.h"
#include "sim/stream_scheduler.h"

namespace dejavu::sim {

namespace {

// Durations of communication tasks, priced once per distinct (comm set, kind, op, size),
// and the link load they add, counted per distinct task shape and spread once at the end:
// tasks repeat the same groups and sizes many times.
class CommPricer {
 public:
  CommPricer(const TaskGraph& g, const Network& net, const CollectiveAlgorithm& algo) : g_(g), net_(net), algo_(algo) {}

  double duration(const Task& t) {
    if (t.kind == TaskKind::Compute) return t.duration_s;
    auto key = std::make_tuple(t.comm_set, static_cast<int>(t.kind), static_cast<int>(t.op), t.bytes);
    uses_[key] += 1;
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    const std::vector<int>& group = g_.comm_set(t.comm_set).groups.at(0);
    double d = 0;
    if (t.kind == TaskKind::Transfer) {
      d = transfer_time_s(net_, group.at(0), group.at(1), t.bytes);
    } else {
      d = algorithm_for(algo_, net_, group, t.op).time_s(net_, group, t.op, t.bytes);
    }
    cache_.emplace(key, d);
    return d;
  }

  std::vector<double> link_bytes() const {
    std::vector<double> load(2 * net_.link_count(), 0.0);
    std::vector<double> one(load.size());
    for (const auto& [key, uses] : uses_) {
      const auto [set, kind, op, bytes] = key;
      std::fill(one.begin(), one.end(), 0.0);
      for (const auto& group : g_.comm_set(set).groups) {
        if (static_cast<TaskKind>(kind) == TaskKind::Transfer)
          add_transfer_load(net_, group.at(0), group.at(1), bytes, one);
        else
          algorithm_for(algo_, net_, group, static_cast<CollectiveOp>(op))
              .add_link_load(net_, group, static_cast<CollectiveOp>(op), bytes, one);
      }
      for (size_t i = 0; i < load.size(); ++i) load[i] += uses * one[i];
    }
    return load;
  }

 private:
  const TaskGraph& g_;
  const Network& net_;
  const CollectiveAlgorithm& algo_;
  std::map<std::tuple<int, int, int, double>, double> cache_;
  std::map<std::tuple<int, int, int, double>, double> uses_;
};

// The links a comm set's groups' routes cross, per comm set, computed once.
class LinksOf {
 public:
  LinksOf(const TaskGraph& g, const Network& net) : g_(g), net_(net) {}
  const std::vector<int>& operator()(int set) {
    auto [it, fresh] = links_.try_emplace(set);
    if (!fresh) return it->second;
    std::vector<char> seen(net_.link_count(), 0);
    for (const auto& group : g_.comm_set(set).groups)
      for (size_t a = 0; a < group.size(); ++a)
        for (size_t b = 0; b < group.size(); ++b)
          if (a != b)
            for (const Hop& h : net_.route(group[a], group[b]))
              if (!seen[h.link]) {
                seen[h.link] = 1;
                it->second.push_back(h.link);
              }
    return it->second;
  }

 private:
  const TaskGraph& g_;
  const Network& net_;
  std::map<int, std::vector<int>> links_;
};

// A fail-stop of a GPU the graph uses, before the end, stops the iteration there.
void stop_at_fail_stops(const TaskGraph& g, const Network& net, const Faults& faults, Result& r) {
  for (const auto& [host, at] : faults.host_fail_s) {
    bool used = false;
    for (const Device& dev : g.devices())
      used = used || std::find(dev.hosts.begin(), dev.hosts.end(), host) != dev.hosts.end();
    if (used && at < r.makespan_s && (!r.stopped() || at < r.stopped_at_s)) {
      r.stopped_at_s = at;
      r.stop_cause = "GPU " + net.node(host).name + " failed";
    }
  }
}

}  // namespace

Result AnalyticEngine::run(const TaskGraph& g, const Network& net, const EngineOptions& options) const {
  const auto algo = collective_algorithms().make(options.collective_algorithm);
  CommPricer pricer(g, net, *algo);
  StreamScheduler sched(g);
  Result r;
  r.engine = "analytic";
  r.start_s.assign(g.size(), -1.0);
  r.end_s.assign(g.size(), -1.0);

  using Event = std::tuple<double, uint64_t, TaskId>;  // end time, sequence, task
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  uint64_t seq = 0;
  // Faults: a straggler's compute integrates its speed windows; a transfer or collective
  // integrates the bandwidth factor of its worst link (its whole duration stretched:
  // exact when bandwidth-bound), so a window that opens mid-transfer slows the rest of
  // it; a link that is down when it starts, or goes down under it, stops the iteration.
  const Faults& faults = options.faults;
  LinksOf links(g, net);
  auto start = [&](const std::vector<TaskId>& ids, double now) {
    for (TaskId id : ids) {
      const Task& t = g.task(id);
      double d = pricer.duration(t);
      r.start_s[id] = now;
      if (!faults.empty()) {
        if (t.kind == TaskKind::Compute && !faults.host_speed.empty()) {
          d = faults.finish_s(g.devices().at(t.device).hosts, now, d) - now;
        } else if (t.kind != TaskKind::Compute && !faults.link_bandwidth.empty()) {
          const Faults::Transfer x = faults.transfer_s(links(t.comm_set), now, d);
          if (x.failed) {
            if (!r.stopped() || x.finish_s < r.stopped_at_s) {
              r.stopped_at_s = x.finish_s;
              r.stop_cause = "\"" + g.labels().at(t.label) + "\" needs a link that is down";
            }
            continue;  // never finishes
          }
          d = x.finish_s - now;
        }
      }
      r.end_s[id] = now + d;
      events.emplace(r.end_s[id], seq++, id);
    }
  };
  start(sched.initial(), 0.0);
  std::vector<TaskId> startable;
  while (!events.empty()) {
    const auto [now, s, id] = events.top();
    events.pop();
    r.makespan_s = std::max(r.makespan_s, now);
    startable.clear();
    sched.finish(id, startable);
    start(startable, now);
  }
  if (!r.stopped()) sched.check_all_finished();
  stop_at_fail_stops(g, net, faults, r);
  if (r.stopped()) r.makespan_s = r.stopped_at_s;
  r.link_bytes = pricer.link_bytes();
  r.activities = g.size();
  return r;
}

}  // namespace dejavu::sim
