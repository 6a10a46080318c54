#include "sim/analytic_engine.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <cmath>
#include <map>
#include <queue>
#include <tuple>

#include "sim/collective.h"
#include "sim/error.h"
#include "sim/link_sharing.h"
#include "sim/sm_sharing.h"
#include "sim/stream_scheduler.h"

namespace dejavu::sim {

namespace {

// A communication task's shape, (comm set, kind, op, size), priced once: its duration
// alone and, with links shared, the load it puts on each link direction and how many flows
// (one per group loading it). Tasks repeat the same groups and sizes many times.
struct Shape {
  double duration_s = 0;
  LinkDemand demand;
  std::vector<std::pair<int, int>> flows;  // (link direction, flows), in demand's order
  double uses = 0;                         // tasks of this shape run, for link_bytes()
};

// Prices shapes, and spreads their link bytes once at the end.
class CommPricer {
 public:
  CommPricer(const TaskGraph& g, const Network& net, const CollectiveAlgorithm& algo, bool contention)
      : g_(g),
        net_(net),
        algo_(algo),
        contention_(contention),
        load_(2 * net.link_count()),
        group_load_(2 * net.link_count()),
        position_(contention ? 2 * static_cast<size_t>(net.link_count()) : 0, -1) {}

  const Shape& shape(const Task& t) {
    const Key key = std::make_tuple(t.comm_set, static_cast<int>(t.kind), static_cast<int>(t.op), t.bytes);
    auto [it, fresh] = shapes_.try_emplace(key);
    Shape& sh = it->second;
    sh.uses += 1;
    if (!fresh) return sh;
    const std::vector<int>& group = g_.comm_set(t.comm_set).groups.at(0);
    sh.duration_s = t.kind == TaskKind::Transfer
                        ? transfer_time_s(net_, group.at(0), group.at(1), t.bytes)
                        : algorithm_for(algo_, net_, group, t.op).time_s(net_, group, t.op, t.bytes);
    if (contention_) {
      load_.clear();
      add_load(key, load_);
      if (g_.comm_set(t.comm_set).groups.size() > 1) sh.duration_s = std::max(sh.duration_s, shared_s(key, load_));
      sh.demand = link_demand(net_, load_, sh.duration_s);
      sh.flows = count_flows(key, sh.demand);
    }
    return sh;
  }

  std::vector<double> link_bytes() {
    std::vector<double> load(2 * net_.link_count(), 0.0);
    for (const auto& [key, sh] : shapes_) {
      load_.clear();
      add_load(key, load_);
      load_.add_to(load, sh.uses);
    }
    return load;
  }

 private:
  using Key = std::tuple<int, int, int, double>;
  // A task that stands for several groups at once is no faster than its groups sharing the
  // links they have in common (`load`, its bytes per link direction): a transfer's flows
  // drain max-min fair (fluid_drain_s, plus the slowest route's latency); a collective's
  // groups no faster than its busiest link drains.
  double shared_s(const Key& key, const LinkLoad& load) const {
    const auto [set, kind, op, bytes] = key;
    if (static_cast<TaskKind>(kind) != TaskKind::Transfer) {
      double drain = 0;
      for (int l : load.touched()) drain = std::max(drain, load[l] / net_.link(l / 2).bandwidth_Bps);
      return drain;
    }
    std::vector<Flow> flows;
    double latency = 0;
    for (const auto& group : g_.comm_set(set).groups) {
      Flow& f = flows.emplace_back();
      f.bytes = bytes;
      for (const Hop& h : net_.route(group.at(0), group.at(1))) f.links.push_back(2 * h.link + (h.forward ? 0 : 1));
      latency = std::max(latency, transfer_time_s(net_, group.at(0), group.at(1), 0));
    }
    return latency + fluid_drain_s(net_, flows);
  }

  // The bytes one task of this shape puts on each link direction, over every group its
  // comm set stands for.
  void add_load(const Key& key, LinkLoad& out) const {
    for (const auto& group : g_.comm_set(std::get<0>(key)).groups) add_group_load(key, group, out);
  }

  void add_group_load(const Key& key, const std::vector<int>& group, LinkLoad& out) const {
    const auto [set, kind, op, bytes] = key;
    if (static_cast<TaskKind>(kind) == TaskKind::Transfer)
      add_transfer_load(net_, group.at(0), group.at(1), bytes, out);
    else
      algorithm_for(algo_, net_, group, static_cast<CollectiveOp>(op))
          .add_link_load(net_, group, static_cast<CollectiveOp>(op), bytes, out);
  }

  // Per link direction of `demand` (every one the task loads), the groups that load it.
  std::vector<std::pair<int, int>> count_flows(const Key& key, const LinkDemand& demand) {
    std::vector<std::pair<int, int>> out;
    const auto& groups = g_.comm_set(std::get<0>(key)).groups;
    for (const auto& [l, u] : demand) out.emplace_back(l, groups.size() == 1 ? 1 : 0);
    if (groups.size() == 1) return out;
    for (size_t i = 0; i < demand.size(); ++i) position_[demand[i].first] = static_cast<int>(i);
    for (const auto& group : groups) {
      group_load_.clear();
      add_group_load(key, group, group_load_);
      for (int l : group_load_.touched())
        if (position_[l] >= 0) ++out[position_[l]].second;
    }
    for (const auto& [l, u] : demand) position_[l] = -1;
    return out;
  }

  const TaskGraph& g_;
  const Network& net_;
  const CollectiveAlgorithm& algo_;
  const bool contention_;
  std::map<Key, Shape> shapes_;  // node-based: a Shape's address is stable
  LinkLoad load_, group_load_;   // scratch: one shape's bytes, one group's
  std::vector<int> position_;    // scratch: a direction's index in the demand being counted (-1: none)
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

// One run: the event loop. Communication tasks in flight share links (link_sharing.h) when
// `contention` is on: each holds its remaining work (seconds at its alone speed) and a rate,
// and its finish event is re-posted whenever its rate changes (stale events are skipped).
class AnalyticRun {
 public:
  AnalyticRun(const TaskGraph& g, const Network& net, const EngineOptions& options, bool contention)
      : g_(g),
        net_(net),
        faults_(options.faults),
        contention_(contention),
        link_windows_(contention && !options.faults.link_bandwidth.empty()),
        algo_(collective_algorithms().make(options.collective_algorithm)),
        pricer_(g, net, *algo_, contention),
        sched_(g),
        links_(g, net),
        remaining_(g.size(), 0.0),
        rate_(g.size(), 1.0),
        since_(g.size(), 0.0),
        version_(g.size(), 0),
        shape_(g.size(), nullptr),
        scale_(2 * net.link_count(), 1.0) {
    r_.engine = "analytic";
    if (contention_) share_sms();
    r_.start_s.assign(g.size(), -1.0);
    r_.end_s.assign(g.size(), -1.0);
    if (contention_) {
      flows_.assign(2 * net.link_count(), 0);
      owner_.assign(2 * net.link_count(), -1);
      demand_.assign(2 * net.link_count(), 0.0);
      r_.link_peak_demand_Bps.assign(2 * net.link_count(), 0.0);
      busy_since_.assign(2 * net.link_count(), 0.0);
      r_.link_busy_s.assign(2 * net.link_count(), 0.0);
      r_.link_peak_flows.assign(2 * net.link_count(), 0.0);
    }
    if (link_windows_) {
      for (const auto& [link, windows] : faults_.link_bandwidth)
        for (const Window& w : windows)
          for (double t : {w.from_s, w.to_s})
            if (t > 0 && std::isfinite(t)) edges_.push_back(t);
      std::sort(edges_.begin(), edges_.end());
      edges_.erase(std::unique(edges_.begin(), edges_.end()), edges_.end());
      set_link_factors(0);
    }
  }

  Result run() {
    if (start(sched_.initial(), 0.0)) reshare(0.0, true);
    changed_.clear();
    std::vector<TaskId> startable;
    while (!events_.empty()) {
      if (next_edge_ < edges_.size() && edges_[next_edge_] < std::get<0>(events_.top())) {
        on_link_window_edge(edges_[next_edge_++]);
        continue;
      }
      const auto [now, s, id, version] = events_.top();
      events_.pop();
      if (version != version_[id]) continue;  // its rate changed since
      r_.end_s[id] = now;
      r_.makespan_s = std::max(r_.makespan_s, now);
      if (sm_sharing_) release_sms(id, now);
      const bool shared = leave(id, now);
      startable.clear();
      sched_.finish(id, startable);
      if (start(startable, now) || shared) reshare(now);
      changed_.clear();  // what joined or left alone needs no re-share later
    }
    if (!r_.stopped()) sched_.check_all_finished();
    stop_at_fail_stops(g_, net_, faults_, r_);
    if (r_.stopped()) r_.makespan_s = r_.stopped_at_s;
    for (size_t l = 0; l < flows_.size(); ++l) {  // flows that never finished, and a stop
      if (flows_[l] > 0) r_.link_busy_s[l] += std::max(0.0, r_.makespan_s - busy_since_[l]);
      r_.link_busy_s[l] = std::min(r_.link_busy_s[l], r_.makespan_s);
    }
    r_.link_bytes = pricer_.link_bytes();
    r_.activities = g_.size();
    return r_;
  }

 private:
  using Event = std::tuple<double, uint64_t, TaskId, uint32_t>;  // end time, sequence, task, version

  // Starts `ids` at `now`; true if one of them shares a link with a task in flight.
  bool start(const std::vector<TaskId>& ids, double now) {
    bool shared = false;
    for (TaskId id : ids) {
      const Task& t = g_.task(id);
      r_.start_s[id] = now;
      if (t.kind != TaskKind::Compute) shape_[id] = &pricer_.shape(t);
      double d = duration(id, now);
      if (d < 0) continue;  // a link it needs is down: never finishes
      if (link_windows_ && t.kind != TaskKind::Compute && crosses_down_link(id)) {
        stop_on_down_link(t, now);
        continue;
      }
      if (sm_sharing_) d = take_sms(id, now, d);
      r_.end_s[id] = now + d;
      if (contention_ && t.kind != TaskKind::Compute) shared = join(id, now, d) || shared;
      events_.emplace(now + d, seq_++, id, version_[id]);
    }
    return shared;
  }

  // Faults: a straggler's compute integrates its speed windows. With links shared, a link
  // window scales the link's bandwidth from its edge on (on_link_window_edge); alone, a
  // transfer or collective integrates the bandwidth factor of its worst link (its whole
  // duration stretched: exact when bandwidth-bound). Either way a window that opens
  // mid-transfer slows the rest of it, and a link that is down when a task starts, or goes
  // down under it, stops the iteration (-1 here).
  double duration(TaskId id, double now) {
    const Task& t = g_.task(id);
    const double d = t.kind == TaskKind::Compute ? t.duration_s : shape_[id]->duration_s;
    if (faults_.empty()) return d;
    if (t.kind == TaskKind::Compute)
      return faults_.host_speed.empty() ? d : faults_.finish_s(g_.devices().at(t.device).hosts, now, d) - now;
    if (faults_.link_bandwidth.empty() || contention_) return d;
    const Faults::Transfer x = faults_.transfer_s(links_(t.comm_set), now, d);
    if (!x.failed) return x.finish_s - now;
    stop_on_down_link(t, x.finish_s);
    return -1;
  }

  void stop_on_down_link(const Task& t, double at) {
    if (!r_.stopped() || at < r_.stopped_at_s) {
      r_.stopped_at_s = at;
      r_.stop_cause = "\"" + g_.labels().at(t.label) + "\" needs a link that is down";
    }
  }

  void set_link_factors(double now) {
    for (const auto& [link, windows] : faults_.link_bandwidth)
      scale_[2 * link] = scale_[2 * link + 1] = Faults::factor_at(windows, now);
  }

  bool crosses_down_link(TaskId id) const {
    for (const auto& [l, u] : shape_[id]->demand)
      if (scale_[l] <= 0) return true;
    return false;
  }

  // A link window opens or closes: tasks in flight over a link now down never finish (the
  // iteration stops here); the others are re-shared over the links' new bandwidths.
  void on_link_window_edge(double now) {
    set_link_factors(now);
    for (size_t i = active_.size(); i-- > 0;) {
      const TaskId id = active_[i];
      if (!crosses_down_link(id)) continue;
      stop_on_down_link(g_.task(id), now);
      ++version_[id];
      r_.end_s[id] = -1;
      leave(id, now);
    }
    reshare(now, true);
  }

  // SMs shared between compute and communication kernels (sim/sm_sharing.h).
  void share_sms() {
    sms_.emplace(g_, net_.node_count());
    sm_sharing_ = sms_->on();
    if (!sm_sharing_) return;
    kernels_.assign(g_.devices().size(), 0);
    running_.resize(g_.devices().size());
    speed_.assign(g_.size(), 1.0);
  }

  // A compute task's speed on `dev` beside the communication kernels running there.
  double compute_speed(int dev) const { return SmSharing::compute_speed(g_.devices()[dev].comm_share, kernels_[dev]); }

  // Task `id` starts at `now`, `d` long alone: a compute task runs at its device's speed (its
  // duration returned stretched); a communication task takes its devices' SMs, slowing the
  // compute tasks in flight there.
  double take_sms(TaskId id, double now, double d) {
    const Task& t = g_.task(id);
    if (t.kind == TaskKind::Compute) {
      speed_[id] = compute_speed(t.device);
      running_[t.device].push_back(id);
      return d / speed_[id];
    }
    for (int dev : sms_->kernel_devices(t)) {
      ++kernels_[dev];
      retime(dev, now);
    }
    return d;
  }

  // Task `id` ended at `now`: a compute task leaves its device; a communication task gives
  // its SMs back.
  void release_sms(TaskId id, double now) {
    const Task& t = g_.task(id);
    if (t.kind == TaskKind::Compute) {
      std::vector<TaskId>& run = running_[t.device];
      run.erase(std::find(run.begin(), run.end(), id));
      return;
    }
    for (int dev : sms_->kernel_devices(t)) {
      --kernels_[dev];
      retime(dev, now);
    }
  }

  // The compute tasks in flight on `dev` go on at its new speed: the work left (their time
  // left at the old speed) re-timed, their finish re-posted.
  void retime(int dev, double now) {
    const double speed = compute_speed(dev);
    for (TaskId id : running_[dev]) {
      if (speed == speed_[id]) continue;
      r_.end_s[id] = now + (r_.end_s[id] - now) * speed_[id] / speed;
      speed_[id] = speed;
      events_.emplace(r_.end_s[id], seq_++, id, ++version_[id]);
    }
  }

  // A communication task enters the links; true if it shares one with a task in flight or
  // crosses a degraded one.
  bool join(TaskId id, double now, double d) {
    remaining_[id] = d;
    rate_[id] = 1;
    since_[id] = now;
    active_.push_back(id);
    bool shared = false;
    for (const auto& [l, n] : shape_[id]->flows) {
      changed_.push_back(l);
      shared = shared || flows_[l] > 0 || scale_[l] != 1;
      if (flows_[l] == 0) busy_since_[l] = now;
      flows_[l] += n;
      r_.link_peak_flows[l] = std::max(r_.link_peak_flows[l], static_cast<double>(flows_[l]));
    }
    for (const auto& [l, u] : shape_[id]->demand) {
      demand_[l] += u;
      r_.link_peak_demand_Bps[l] = std::max(r_.link_peak_demand_Bps[l], demand_[l]);
    }
    return shared;
  }

  // A task leaves the links at `now`; true if it shared one with a task still in flight.
  bool leave(TaskId id, double now) {
    if (!contention_ || g_.task(id).kind == TaskKind::Compute) return false;
    active_.erase(std::find(active_.begin(), active_.end(), id));
    bool shared = false;
    for (const auto& [l, u] : shape_[id]->demand) demand_[l] -= u;
    for (const auto& [l, n] : shape_[id]->flows) {
      changed_.push_back(l);
      flows_[l] -= n;
      shared = shared || flows_[l] > 0;
      if (flows_[l] == 0) r_.link_busy_s[l] += now - busy_since_[l];
    }
    return shared;
  }

  // The tasks in flight that share links, directly or through others, with the links the
  // tasks that joined or left since the last re-share crossed (`changed_`); every task in
  // flight after a link window's edge. Max-min fair rates are those of each such group alone.
  std::vector<TaskId> affected(bool all) {
    if (all) return active_;
    std::vector<size_t> root(active_.size());
    std::iota(root.begin(), root.end(), 0);
    const auto find = [&](size_t x) {
      while (root[x] != x) x = root[x] = root[root[x]];
      return x;
    };
    for (size_t i = 0; i < active_.size(); ++i)
      for (const auto& [l, u] : shape_[active_[i]]->demand) {
        if (owner_[l] < 0) owner_[l] = static_cast<int>(i);
        root[find(i)] = find(static_cast<size_t>(owner_[l]));
      }
    std::vector<char> hit(active_.size(), 0);
    for (int l : changed_)
      if (owner_[l] >= 0) hit[find(static_cast<size_t>(owner_[l]))] = 1;
    std::vector<TaskId> out;
    for (size_t i = 0; i < active_.size(); ++i)
      if (hit[find(i)]) out.push_back(active_[i]);
    for (TaskId id : active_)
      for (const auto& [l, u] : shape_[id]->demand) owner_[l] = -1;
    return out;
  }

  // Re-shares the links among the tasks in flight that the last joins and leaves touched;
  // re-posts the finish of each whose rate moved.
  void reshare(double now, bool all = false) {
    const std::vector<TaskId> group = affected(all);
    changed_.clear();
    std::vector<const LinkDemand*> demands;
    for (TaskId id : group) {
      remaining_[id] = std::max(0.0, remaining_[id] - (now - since_[id]) * rate_[id]);
      since_[id] = now;
      demands.push_back(&shape_[id]->demand);
    }
    const std::vector<double> rates = fair_rates(net_, demands, scale_);
    for (size_t i = 0; i < group.size(); ++i) {
      const TaskId id = group[i];
      if (rates[i] == rate_[id]) continue;
      rate_[id] = rates[i];
      events_.emplace(now + remaining_[id] / rates[i], seq_++, id, ++version_[id]);
    }
  }

  const TaskGraph& g_;
  const Network& net_;
  const Faults& faults_;
  const bool contention_;
  const bool link_windows_;  // links shared and link windows given: windows scale shared links
  std::unique_ptr<CollectiveAlgorithm> algo_;
  CommPricer pricer_;
  StreamScheduler sched_;
  LinksOf links_;
  Result r_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  std::vector<double> remaining_, rate_, since_;
  std::vector<uint32_t> version_;
  std::vector<const Shape*> shape_;  // per communication task, once started
  std::vector<int> flows_;           // flows in flight per link direction (contention on)
  std::vector<double> busy_since_;
  std::vector<TaskId> active_;
  std::vector<int> changed_;    // link directions tasks joined or left since the last re-share
  std::vector<int> owner_;      // per link direction, scratch for affected(): -1 between calls
  std::vector<double> demand_;  // per link direction, the tasks in flight's demands (bytes/s)
  std::vector<double> scale_;   // bandwidth factor per link direction (link windows, contention on)
  std::vector<double> edges_;   // when a link window opens or closes (contention on), ascending
  size_t next_edge_ = 0;
  std::optional<SmSharing> sms_;              // links shared: SMs too
  bool sm_sharing_ = false;                   // links shared, and a device gives communication kernels a share
  std::vector<int> kernels_;                  // per device, communication kernels running
  std::vector<std::vector<TaskId>> running_;  // per device, compute tasks in flight
  std::vector<double> speed_;                 // per compute task in flight, its speed
};

}  // namespace

Result AnalyticEngine::run(const TaskGraph& g, const Network& net, const EngineOptions& options) const {
  return AnalyticRun(g, net, options, contention_).run();
}

}  // namespace dejavu::sim
