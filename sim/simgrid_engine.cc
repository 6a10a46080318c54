#include "sim/simgrid_engine.h"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <atomic>
#include <cmath>
#include <set>
#include <unordered_map>

#include "sim/collective.h"
#include "sim/error.h"
#include "sim/fork_runner.h"
#include "sim/stream_scheduler.h"

namespace dejavu::sim {

namespace sg = simgrid::s4u;

namespace {

constexpr double kHostSpeed = 1e9;  // flop/s: a compute task of d seconds is d·1e9 flops

std::atomic<bool> simgrid_used{false};

void check_options(const EngineOptions& o) {
  parse_fidelity(o.fidelity);
  if (o.network_model != "exact" && o.network_model != "lv08" && o.network_model != "smpi")
    throw Error("unknown network model \"" + o.network_model + "\"; valid: exact, lv08, smpi");
  if (o.sharing != "max-min" && o.sharing != "fair-bottleneck")
    throw Error("unknown sharing rule \"" + o.sharing + "\"; valid: max-min, fair-bottleneck");
  collective_algorithms().make(o.collective_algorithm);
}

void configure(sg::Engine& e, const EngineOptions& o) {
  if (o.network_model == "exact") {
    e.set_config("network/model:CM02");
    e.set_config("network/crosstraffic:0");
    e.set_config("network/TCP-gamma:0");
  } else if (o.network_model == "lv08") {
    e.set_config("network/model:LV08");
  } else {
    e.set_config("network/model:SMPI");
  }
  if (o.sharing == "fair-bottleneck") e.set_config("network/solver:fairbottleneck");
}

// One simulation: the platform, the lazy DAG and its bookkeeping.
class Run {
 public:
  Run(const TaskGraph& g, const Network& net, const EngineOptions& o)
      : g_(g), net_(net), fidelity_(parse_fidelity(o.fidelity)),
        algo_(collective_algorithms().make(o.collective_algorithm)), sched_(g) {
    result_.engine = "simgrid";
    result_.start_s.assign(g.size(), -1.0);
    result_.end_s.assign(g.size(), -1.0);
    result_.link_bytes.assign(2 * net.link_count(), 0.0);
  }

  void build_platform() {
    sg::NetZone* zone = sg::create_full_zone("dejavu");
    host_.assign(net_.node_count(), nullptr);
    for (int i = 0; i < net_.node_count(); ++i)
      if (net_.node(i).is_host) host_[i] = zone->create_host(net_.node(i).name, kHostSpeed)->seal();
    for (const Link& l : net_.links())
      link_.push_back(zone->create_split_duplex_link(l.name, l.bandwidth_Bps)->set_latency(l.latency_s)->seal());
    for (auto [a, b] : used_pairs()) {
      std::vector<sg::LinkInRoute> route;
      for (const Hop& h : net_.route(a, b))
        route.emplace_back(link_[h.link], h.forward ? sg::LinkInRoute::Direction::UP
                                                    : sg::LinkInRoute::Direction::DOWN);
      zone->add_route(host_[a]->get_netpoint(), host_[b]->get_netpoint(), nullptr, nullptr, route, false);
    }
    zone->seal();
  }

  Result simulate() {
    sg::Activity::on_completion_cb([this](const sg::Activity& a) { on_completion(a); });
    start_all(sched_.initial());
    sg::Engine::get_instance()->run();
    if (!failure_.empty()) throw ModelError(failure_);
    sched_.check_all_finished();
    for (double end : result_.end_s) result_.makespan_s = std::max(result_.makespan_s, end);
    graveyard_.clear();
    return std::move(result_);
  }

 private:
  struct Pending {
    TaskId task;
    int32_t flow;  // -1 for a compute task
    sg::ActivityPtr handle;
  };
  struct CommRun {
    Expansion exp;
    std::vector<int32_t> waiting;                // per flow: unfinished `after` flows
    std::vector<std::vector<int32_t>> dependents;  // per flow: flows waiting on it
    size_t remaining = 0;
  };

  // Host pairs any flow of this run uses, so SimGrid is given only the routes it needs.
  std::set<std::pair<int, int>> used_pairs() {
    std::set<std::pair<int, int>> pairs;
    std::set<std::pair<int, int>> seen;  // (comm set, op) already expanded
    for (const Task& t : g_.tasks()) {
      if (t.kind == TaskKind::Compute) continue;
      if (!seen.emplace(t.comm_set, t.kind == TaskKind::Transfer ? -1 : static_cast<int>(t.op)).second)
        continue;
      for (const auto& group : g_.comm_set(t.comm_set).groups) {
        if (t.kind == TaskKind::Transfer) {
          if (group.at(0) != group.at(1)) pairs.emplace(group[0], group[1]);
          continue;
        }
        if (fidelity_ == Fidelity::Closed) continue;
        Expansion e;
        algo_->expand(net_, group, t.op, 1.0, fidelity_, e);
        for (const FlowSpec& f : e.flows)
          if (f.src != f.dst) pairs.emplace(f.src, f.dst);
      }
    }
    return pairs;
  }

  double now() const { return sg::Engine::get_clock(); }

  void start_all(const std::vector<TaskId>& ids) {
    for (TaskId id : ids) start(id);
  }

  void at(double date, TaskId id) {
    simgrid::kernel::timer::Timer::set(date, [this, id] { finish(id); });
  }

  void start(TaskId id) {
    const Task& t = g_.task(id);
    result_.start_s[id] = now();
    if (t.kind == TaskKind::Compute) {
      const auto& hosts = g_.devices().at(t.device).hosts;
      if (t.duration_s <= 0 || hosts.empty() || !host_.at(hosts[0])) {
        at(now() + std::max(0.0, t.duration_s), id);
        return;
      }
      sg::ExecPtr e = sg::Exec::init();
      e->set_host(host_[hosts[0]]);
      e->set_flops_amount(t.duration_s * kHostSpeed);
      e->start();
      pending_.emplace(e.get(), Pending{id, -1, e});
      return;
    }
    const CommSet& set = g_.comm_set(t.comm_set);
    if (t.kind == TaskKind::Collective && fidelity_ == Fidelity::Closed) {
      for (const auto& group : set.groups) algo_->add_link_load(net_, group, t.op, t.bytes, result_.link_bytes);
      at(now() + algo_->time_s(net_, set.groups.at(0), t.op, t.bytes), id);
      return;
    }
    CommRun run;
    for (const auto& group : set.groups) {
      if (t.kind == TaskKind::Transfer)
        run.exp.flows.push_back(FlowSpec{group.at(0), group.at(1), t.bytes, {-1, -1}});
      else
        algo_->expand(net_, group, t.op, t.bytes, fidelity_, run.exp);
    }
    run.remaining = run.exp.flows.size();
    if (run.remaining == 0) {
      at(now() + run.exp.extra_latency_s, id);
      return;
    }
    run.waiting.assign(run.exp.flows.size(), 0);
    run.dependents.resize(run.exp.flows.size());
    for (size_t f = 0; f < run.exp.flows.size(); ++f)
      for (int32_t a : run.exp.flows[f].after)
        if (a >= 0) {
          ++run.waiting[f];
          run.dependents[a].push_back(static_cast<int32_t>(f));
        }
    CommRun& r = comms_.emplace(id, std::move(run)).first->second;
    for (size_t f = 0; f < r.exp.flows.size(); ++f)
      if (r.waiting[f] == 0) start_flow(id, r, static_cast<int32_t>(f));
  }

  void start_flow(TaskId id, CommRun& r, int32_t f) {
    const FlowSpec& spec = r.exp.flows[f];
    add_transfer_load(net_, spec.src, spec.dst, spec.bytes, result_.link_bytes);
    if (spec.src == spec.dst) {
      simgrid::kernel::timer::Timer::set(now(), [this, id, f] { flow_done(id, f); });
      return;
    }
    sg::CommPtr c = sg::Comm::sendto_init(host_[spec.src], host_[spec.dst]);
    c->set_payload_size(static_cast<uint64_t>(std::llround(spec.bytes)));
    c->start();
    pending_.emplace(c.get(), Pending{id, f, c});
  }

  void flow_done(TaskId id, int32_t f) {
    CommRun& r = comms_.at(id);
    for (int32_t d : r.dependents[f])
      if (--r.waiting[d] == 0) start_flow(id, r, d);
    if (--r.remaining > 0) return;
    const double extra = r.exp.extra_latency_s;
    comms_.erase(id);
    if (extra > 0)
      at(now() + extra, id);
    else
      finish(id);
  }

  void on_completion(const sg::Activity& a) {
    graveyard_.clear();  // handles are released one callback after their completion
    auto it = pending_.find(&a);
    if (it == pending_.end()) return;
    Pending p = std::move(it->second);
    pending_.erase(it);
    graveyard_.push_back(std::move(p.handle));
    if (a.get_state() == sg::Activity::State::FAILED) {
      if (failure_.empty())
        failure_ = "activity of task \"" + g_.labels().at(g_.task(p.task).label) + "\" failed";
      return;
    }
    if (p.flow < 0)
      finish(p.task);
    else
      flow_done(p.task, p.flow);
  }

  void finish(TaskId id) {
    result_.end_s[id] = now();
    startable_.clear();
    sched_.finish(id, startable_);
    const std::vector<TaskId> next = startable_;
    start_all(next);
  }

  const TaskGraph& g_;
  const Network& net_;
  Fidelity fidelity_;
  std::unique_ptr<CollectiveAlgorithm> algo_;
  StreamScheduler sched_;
  Result result_;
  std::vector<sg::Host*> host_;
  std::vector<sg::Link*> link_;
  std::unordered_map<const sg::Activity*, Pending> pending_;
  std::unordered_map<TaskId, CommRun> comms_;
  std::vector<sg::ActivityPtr> graveyard_;
  std::vector<TaskId> startable_;
  std::string failure_;
};

}  // namespace

Result SimGridEngine::run(const TaskGraph& g, const Network& net, const EngineOptions& o) const {
  check_options(o);
  if (o.isolate) return run_in_child([&] { return run_here(g, net, o); }, o.timeout_s);
  return run_here(g, net, o);
}

Result SimGridEngine::run_here(const TaskGraph& g, const Network& net, const EngineOptions& o) {
  check_options(o);
  if (simgrid_used.exchange(true))
    throw Error("SimGrid runs once per process; run further simulations isolated (forked)");
  std::vector<std::string> args = {"dejavu", "--log=root.thresh:critical"};
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  int argc = static_cast<int>(argv.size());
  sg::Engine engine(&argc, argv.data());
  xbt_log_control_set("root.thresh:critical");
  configure(engine, o);
  Run run(g, net, o);
  run.build_platform();
  return run.simulate();
}

}  // namespace dejavu::sim
