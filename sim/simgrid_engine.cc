#include "sim/simgrid_engine.h"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "sim/collective.h"
#include "sim/error.h"
#include "sim/flow_symmetry.h"
#include "sim/fork_runner.h"
#include "sim/simgrid_platform.h"
#include "sim/sm_sharing.h"
#include "sim/step_periods.h"
#include "sim/stream_scheduler.h"

namespace dejavu::sim {

namespace sg = simgrid::s4u;

namespace {

std::atomic<bool> simgrid_used{false};

// A communication kernel's exec never finishes by itself: cancelled when its task ends.
constexpr double kKernelFlops = 1e20;

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
  // `in_full`: tasks to play in full although their set is speculated; null: speculate none.
  Run(const TaskGraph& g, const Network& net, const EngineOptions& o, const std::set<TaskId>* in_full)
      : g_(g),
        in_full_(in_full),
        net_(net),
        faults_(o.faults),
        fidelity_(parse_fidelity(o.fidelity)),
        symmetric_groups_once_(o.symmetric_groups_once),
        keep_alike_(o.keep_alike_steps > 0 ? std::max(8, o.keep_alike_steps) : 0),
        algo_(collective_algorithms().make(o.collective_algorithm)),
        sched_(g),
        link_load_(2 * net.link_count()),
        sms_(g, net.node_count()) {
    result_.engine = "simgrid";
    result_.start_s.assign(g.size(), -1.0);
    result_.end_s.assign(g.size(), -1.0);
    result_.link_bytes.assign(2 * net.link_count(), 0.0);
    result_.link_busy_s.assign(2 * net.link_count(), 0.0);
    result_.link_peak_flows.assign(2 * net.link_count(), 0.0);
    in_flight_.assign(2 * net.link_count(), 0);
    busy_since_.assign(2 * net.link_count(), 0.0);
  }

  void build_platform() {
    plan_flows();
    const std::set<std::pair<int, int>> pairs = used_pairs();
    // SimGrid hosts: where flows start or end, where a device computes, where a fault is.
    std::vector<char> hosts(static_cast<size_t>(net_.node_count()), 0);
    for (auto [a, b] : pairs) hosts[a] = hosts[b] = 1;
    for (const Device& d : g_.devices())
      if (!d.hosts.empty()) hosts[d.hosts[0]] = 1;
    for (const auto& [host, windows] : faults_.host_speed) hosts[host] = 1;
    for (const auto& [host, at] : faults_.host_fail_s) hosts[host] = 1;
    platform_.emplace(net_, faults_, hosts, pairs);
  }

  Result simulate() {
    sg::Activity::on_completion_cb([this](const sg::Activity& a) { on_completion(a); });
    for (TaskId id : sched_.initial()) start(id);
    sg::Engine::get_instance()->run();
    if (!failure_.empty() && faults_.empty()) throw ModelError(failure_);
    if (!failure_.empty()) {  // a fault stopped the iteration
      result_.stopped_at_s = failed_at_;
      result_.stop_cause = failure_;
      result_.makespan_s = failed_at_;
    } else {
      sched_.check_all_finished();
      for (double end : result_.end_s) result_.makespan_s = std::max(result_.makespan_s, end);
    }
    graveyard_.clear();
    for (size_t l = 0; l < in_flight_.size(); ++l) {  // flows a stop left in flight
      if (in_flight_[l] > 0) result_.link_busy_s[l] += std::max(0.0, result_.makespan_s - busy_since_[l]);
      result_.link_busy_s[l] = std::min(result_.link_busy_s[l], result_.makespan_s);
    }
    for (const Template& t : templates_) {  // spread each template's load once
      for (const FlowSpec& f : t.exp.flows) add_transfer_load(net_, f.src, f.dst, f.bytes * t.uses, link_load_);
      for (const AlikeSteps& c : t.exp.cut)  // and the steps it played as time
        for (int32_t i = c.first_flow; i < c.first_flow + c.per_step; ++i) {
          const FlowSpec& f = t.exp.flows[i];
          add_transfer_load(net_, f.src, f.dst, f.bytes * t.uses * static_cast<double>(c.skipped), link_load_);
        }
    }
    link_load_.add_to(result_.link_bytes);
    if (guard_) replay_.insert(guard_->broken().begin(), guard_->broken().end());
    result_.replay_in_full.assign(replay_.begin(), replay_.end());
    return std::move(result_);
  }

 private:
  // The flows of one (comm set, kind, op, size), with the step dependencies worked out
  // once (a schedule's shape may depend on the size: chunking, auto's choice).
  struct Template {
    int comm_set = -1;
    Expansion exp;
    std::vector<int32_t> group_begin;              // group g's flows: [group_begin[g], group_begin[g + 1])
    std::vector<int32_t> dir_begin, dirs;          // flow f's link directions: dirs[dir_begin[f] ..]
    std::vector<int32_t> waiting;                  // per flow: flows it waits for
    std::vector<std::vector<int32_t>> dependents;  // per flow: flows waiting on it
    // How its tasks play (flow_symmetry.h). Once and Speculate: its flows class by class
    // (`order`, `per_class` each), each flow's place in its class, and (Speculate) every
    // direction any class crosses, which a task played once claims while it runs.
    // A template with alike steps cut (exp.cut) claims `claimed` too.
    Play play = Play::Every;
    std::vector<int32_t> order, slot, claimed;
    int32_t per_class = 0;
    double uses = 0;  // tasks that ran it
  };
  struct CommRun {
    const Template* tpl = nullptr;
    TaskId task = -1;
    bool once = false;             // its first class played for all
    std::vector<int32_t> waiting;  // only for expansions with dependencies
    size_t remaining = 0;
    // Alike steps cut: their periods, and per window edge the claimed directions' busy time.
    std::optional<StepPeriods> periods;
    std::vector<std::vector<double>> edges;
    int kind() const {  // a SymmetryGuard kind; a task with steps cut is a kind of its own
      return periods ? -1 - task : 2 * tpl->comm_set + (once ? 0 : 1);
    }
  };
  struct Slot {  // one started activity; its index travels as the activity's data
    TaskId task = -1;
    int32_t flow = -1;  // -1 for a compute task
    sg::ActivityPtr handle;
  };

  // Every task's flows worked out before the run, and how each comm set's tasks play
  // (flow_symmetry.h): in full, their first class once, or speculated once.
  void plan_flows() {
    for (TaskId id = 0; id < static_cast<TaskId>(g_.size()); ++id) {
      const Task& t = g_.task(id);
      if (t.kind == TaskKind::Transfer || (t.kind == TaskKind::Collective && fidelity_ != Fidelity::Closed))
        template_of(id);
    }
    for (Template& t : templates_)
      if (!t.exp.cut.empty()) {
        claim_all(t);
        if (!guard_) guard_.emplace(2 * static_cast<size_t>(net_.link_count()));
      }
    if (!symmetric_groups_once_) return;
    std::vector<GroupedFlows> shapes;
    for (const Template& t : templates_) shapes.push_back(GroupedFlows{t.comm_set, &t.exp, &t.group_begin});
    const std::vector<SetSymmetry> sets =
        symmetric_comm_sets(net_, faults_, shapes, static_cast<int>(g_.comm_sets().size()));
    for (Template& t : templates_) {
      const SetSymmetry& s = sets[t.comm_set];
      t.play = s.play == Play::Speculate && !in_full_ ? Play::Every : s.play;
      if (t.play == Play::Every) continue;
      t.slot.assign(t.exp.flows.size(), 0);
      for (const auto& groups : s.classes) {
        const size_t first = t.order.size();
        for (int g : groups)
          for (int32_t f = t.group_begin[g]; f < t.group_begin[g + 1]; ++f) {
            t.slot[f] = static_cast<int32_t>(t.order.size() - first);
            t.order.push_back(f);
          }
      }
      t.per_class = static_cast<int32_t>(t.order.size() / s.classes.size());
      if (t.play == Play::Speculate) {
        claim_all(t);
        if (!guard_) guard_.emplace(2 * static_cast<size_t>(net_.link_count()));
      }
    }
  }

  static void claim_all(Template& t) {
    t.claimed = t.dirs;
    std::sort(t.claimed.begin(), t.claimed.end());
    t.claimed.erase(std::unique(t.claimed.begin(), t.claimed.end()), t.claimed.end());
  }

  // A task may play its alike steps in part (step_periods.h): a collective of one group at
  // step fidelity, in a run that can replay it in full, with no fault anywhere.
  bool cuttable(TaskId id) const {
    const Task& t = g_.task(id);
    return fidelity_ == Fidelity::Step && keep_alike_ > 0 && t.kind == TaskKind::Collective && in_full_ &&
           !in_full_->count(id) && faults_.empty() && g_.comm_set(t.comm_set).groups.size() == 1;
  }

  // Host pairs the flows of this run may use, so SimGrid is given only the routes it needs.
  std::set<std::pair<int, int>> used_pairs() const {
    std::set<std::pair<int, int>> pairs;
    for (const Template& t : templates_) {
      const bool first_class = t.play == Play::Once;
      const auto n = static_cast<int32_t>(first_class ? t.per_class : t.exp.flows.size());
      for (int32_t i = 0; i < n; ++i) {
        const FlowSpec& f = t.exp.flows[first_class ? t.order[i] : i];
        if (f.src != f.dst) pairs.emplace(f.src, f.dst);
      }
    }
    return pairs;
  }

  Template& template_of(TaskId id) {
    const Task& t = g_.task(id);
    const int keep = cuttable(id) ? keep_alike_ : 0;
    const auto key = std::make_tuple(t.comm_set, static_cast<int>(t.kind), static_cast<int>(t.op), t.bytes, keep);
    auto it = template_index_.find(key);
    if (it != template_index_.end()) return templates_[it->second];
    template_index_.emplace(key, templates_.size());
    Template& tpl = templates_.emplace_back();
    tpl.comm_set = t.comm_set;
    for (const auto& group : g_.comm_set(t.comm_set).groups) {
      tpl.group_begin.push_back(static_cast<int32_t>(tpl.exp.flows.size()));
      if (t.kind == TaskKind::Transfer)
        tpl.exp.flows.push_back(FlowSpec{group.at(0), group.at(1), t.bytes, 0, 0});
      else
        algorithm_for(*algo_, net_, group, t.op).expand(net_, group, t.op, t.bytes, fidelity_, tpl.exp, keep);
    }
    tpl.group_begin.push_back(static_cast<int32_t>(tpl.exp.flows.size()));
    for (const FlowSpec& f : tpl.exp.flows) {
      tpl.dir_begin.push_back(static_cast<int32_t>(tpl.dirs.size()));
      if (f.src != f.dst)
        for (const Hop& h : net_.route(f.src, f.dst)) tpl.dirs.push_back(2 * h.link + (h.forward ? 0 : 1));
    }
    tpl.dir_begin.push_back(static_cast<int32_t>(tpl.dirs.size()));
    tpl.waiting.assign(tpl.exp.flows.size(), 0);
    tpl.dependents.resize(tpl.exp.flows.size());
    for (size_t f = 0; f < tpl.exp.flows.size(); ++f)
      for (int32_t k = 0; k < tpl.exp.flows[f].dep_count; ++k) {
        ++tpl.waiting[f];
        tpl.dependents[tpl.exp.deps[tpl.exp.flows[f].dep_begin + k]].push_back(static_cast<int32_t>(f));
      }
    return tpl;
  }

  double now() const { return sg::Engine::get_clock(); }

  void at(double date, TaskId id) {
    ++result_.activities;
    simgrid::kernel::timer::Timer::set(date, [this, id] { finish(id); });
  }

  void track(sg::ActivityPtr a, TaskId task, int32_t flow) {
    size_t slot;
    if (free_slots_.empty()) {
      slot = slots_.size();
      slots_.emplace_back();
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
    }
    a->set_data(reinterpret_cast<void*>(slot + 1));
    ++result_.activities;
    slots_[slot] = Slot{task, flow, std::move(a)};
  }

  void start(TaskId id) {
    const Task& t = g_.task(id);
    result_.start_s[id] = now();
    if (t.kind == TaskKind::Compute) {
      const auto& hosts = g_.devices().at(t.device).hosts;
      if (t.duration_s <= 0 || hosts.empty() || !platform_->host(hosts[0])) {
        at(now() + std::max(0.0, t.duration_s), id);
        return;
      }
      sg::ExecPtr e = sg::Exec::init();
      sg::Host* host = compute_host(t.device);
      if (!host->is_on()) return fail(id);
      e->set_host(host);
      e->set_flops_amount(t.duration_s * kSimGridHostSpeed);
      const double share = g_.devices().at(t.device).comm_share;
      if (share > 0) e->set_priority(1 - share);
      e->start();
      track(e, id, -1);
      return;
    }
    take_sms(id);
    if (t.kind == TaskKind::Collective && fidelity_ == Fidelity::Closed) {
      for (const auto& group : g_.comm_set(t.comm_set).groups)
        algorithm_for(*algo_, net_, group, t.op).add_link_load(net_, group, t.op, t.bytes, link_load_);
      const auto& first = g_.comm_set(t.comm_set).groups.at(0);
      at(now() + algorithm_for(*algo_, net_, first, t.op).time_s(net_, first, t.op, t.bytes), id);
      return;
    }
    Template& tpl = template_of(id);
    tpl.uses += 1;
    if (tpl.exp.flows.empty()) {
      at(now() + tpl.exp.extra_latency_s, id);
      return;
    }
    CommRun& run = comms_[id];
    run.tpl = &tpl;
    run.task = id;
    run.once = tpl.play == Play::Once || (tpl.play == Play::Speculate && !in_full_->count(id));
    if (!tpl.exp.cut.empty()) {
      run.periods.emplace(tpl.exp);
      run.edges.resize(2 * tpl.exp.cut.size());
      guard_->claim(id, run.kind(), tpl.claimed);
    }
    const auto n = static_cast<int32_t>(run.once ? tpl.per_class : tpl.exp.flows.size());
    run.remaining = static_cast<size_t>(n);
    const bool has_deps = std::any_of(tpl.waiting.begin(), tpl.waiting.end(), [](int32_t w) { return w > 0; });
    if (has_deps) run.waiting = tpl.waiting;
    if (run.once && tpl.play == Play::Speculate) guard_->claim(id, run.kind(), tpl.claimed);
    for (int32_t i = 0; i < n; ++i) {
      const int32_t f = run.once ? tpl.order[i] : i;
      if (tpl.waiting[f] == 0) start_flow(id, run, f);
    }
  }

  // Where a device computes: its GPUs run in lockstep, so a straggling or failing one among
  // them sets the pace.
  sg::Host* compute_host(int device) const {
    const auto& hosts = g_.devices().at(device).hosts;
    for (int h : hosts)
      if (faults_.host_speed.count(h) || faults_.host_fail_s.count(h)) return platform_->host(h);
    return platform_->host(hosts.at(0));
  }

  // SMs shared (sim/sm_sharing.h): on each device whose SMs communication task `id`'s kernels
  // hold, an exec of weight c beside the device's compute execs (weight 1 - c) on the host its
  // compute runs on, until the task ends. SimGrid shares a host by weight.
  void take_sms(TaskId id) {
    for (int dev : sms_.kernel_devices(g_.task(id))) {
      sg::Host* host = compute_host(dev);
      if (!host || !host->is_on()) continue;
      sg::ExecPtr e = sg::Exec::init();
      e->set_host(host);
      e->set_flops_amount(kKernelFlops);
      e->set_priority(g_.devices().at(dev).comm_share);
      e->start();
      kernels_.emplace(id, std::move(e));
    }
  }

  // Cancelled from a timer: SimGrid 3.32 cancels an exec inside another activity's completion
  // callback (where tasks end) without giving its host share back.
  void release_sms(TaskId id) {
    auto [from, to] = kernels_.equal_range(id);
    for (auto it = from; it != to; ++it)
      simgrid::kernel::timer::Timer::set(now(), [this, e = std::move(it->second)] {
        if (e->get_state() == sg::Activity::State::STARTED) e->cancel();
        graveyard_.push_back(e);
      });
    kernels_.erase(from, to);
  }

  // A flow leaves its sender after the sender's step latency (NCCL's per-step overhead).
  void start_flow(TaskId id, const CommRun& r, int32_t f) {
    const FlowSpec& spec = r.tpl->exp.flows[f];
    const double delay = spec.src == spec.dst ? 0 : net_.node(spec.src).step_latency_s;
    if (delay > 0) {
      ++result_.activities;
      simgrid::kernel::timer::Timer::set(now() + delay, [this, id, f] { send_flow(id, f); });
      return;
    }
    send_flow(id, f);
  }

  void send_flow(TaskId id, int32_t f) {
    CommRun& r = comms_.at(id);
    const FlowSpec& spec = r.tpl->exp.flows[f];
    if (r.periods) r.periods->started(f, now());
    if (spec.src == spec.dst) {
      ++result_.activities;
      simgrid::kernel::timer::Timer::set(now(), [this, id, f] { flow_done(id, f); });
      return;
    }
    // SimGrid asserts on a transfer to or from a host that is off: that is a fail-stop.
    sg::Host* src = platform_->host(spec.src);
    sg::Host* dst = platform_->host(spec.dst);
    if (!src->is_on() || !dst->is_on()) return fail(id);
    sg::CommPtr c = sg::Comm::sendto_init(src, dst);
    c->set_payload_size(static_cast<uint64_t>(std::llround(spec.bytes)));
    c->start();
    track(c, id, f);
    count_flow(r, f, +1);
  }

  // A flow enters (+1) or leaves (-1) the link directions of its route: how long each had
  // one in flight, and the most at once (SimGrid's own flows: a ring's channels count each).
  // A flow played for every class counts on their links too. The guard sees it unless its
  // set never meets another.
  void count_flow(const CommRun& r, int32_t f, int delta) {
    const Template& tpl = *r.tpl;
    if (guard_ && tpl.play != Play::Once) {
      const int32_t* dirs = tpl.dirs.data() + tpl.dir_begin[f];
      const auto n = static_cast<size_t>(tpl.dir_begin[f + 1] - tpl.dir_begin[f]);
      if (delta > 0)
        guard_->flow_enters(r.kind(), dirs, n);
      else
        guard_->flow_leaves(r.kind(), dirs, n);
    }
    const size_t classes = r.once ? tpl.order.size() / static_cast<size_t>(tpl.per_class) : 1;
    for (size_t c = 0; c < classes; ++c) {
      const int32_t i = r.once ? tpl.order[c * tpl.per_class + tpl.slot[f]] : f;
      for (int32_t k = tpl.dir_begin[i]; k < tpl.dir_begin[i + 1]; ++k) {
        const auto l = static_cast<size_t>(tpl.dirs[k]);
        if (delta > 0 && in_flight_[l] == 0) busy_since_[l] = now();
        in_flight_[l] += delta;
        if (delta < 0 && in_flight_[l] == 0) result_.link_busy_s[l] += now() - busy_since_[l];
        result_.link_peak_flows[l] = std::max(result_.link_peak_flows[l], static_cast<double>(in_flight_[l]));
      }
    }
  }

  void flow_done(TaskId id, int32_t f) {
    CommRun& r = comms_.at(id);
    if (r.periods) {
      const int edge = r.periods->ended(f, now());
      if (edge >= 0) r.edges[edge] = busy_now(r.tpl->claimed);
    }
    if (!r.waiting.empty())
      for (int32_t d : r.tpl->dependents[f])
        if (--r.waiting[d] == 0) start_flow(id, r, d);
    if (--r.remaining > 0) return;
    if (r.once && r.tpl->play == Play::Speculate) guard_->release(id, r.tpl->claimed);
    double extra = r.tpl->exp.extra_latency_s;
    if (r.periods) {
      extra += cut_steps_time(r);
      claimed_until_finish_.emplace(id, &r.tpl->claimed);
    }
    comms_.erase(id);
    if (extra > 0)
      at(now() + extra, id);
    else
      finish(id);
  }

  void on_completion(const sg::Activity& a) {
    const auto token = reinterpret_cast<uintptr_t>(a.get_data<void>());
    // Not one of ours to finish: a communication kernel's exec, cancelled (possibly inside
    // another's callback, whose handle the graveyard still holds).
    if (token == 0 || token > slots_.size()) return;
    graveyard_.clear();  // handles are released one callback after their completion
    Slot slot = std::move(slots_[token - 1]);
    free_slots_.push_back(token - 1);
    graveyard_.push_back(std::move(slot.handle));
    if (slot.flow >= 0) count_flow(comms_.at(slot.task), slot.flow, -1);
    if (a.get_state() == sg::Activity::State::FAILED) return fail(slot.task);
    if (slot.flow < 0)
      finish(slot.task);
    else
      flow_done(slot.task, slot.flow);
  }

  // Per direction: how long it has had a flow in flight so far.
  std::vector<double> busy_now(const std::vector<int32_t>& dirs) const {
    std::vector<double> busy;
    for (int32_t d : dirs) busy.push_back(result_.link_busy_s[d] + (in_flight_[d] > 0 ? now() - busy_since_[d] : 0));
    return busy;
  }

  // The time a task's cut steps take, their links busy as in the window they repeat; a task
  // whose kept steps did not settle into a period is replayed in full.
  double cut_steps_time(const CommRun& r) {
    const double t = r.periods->cut_time_s();
    if (t < 0) {
      replay_.insert(r.task);
      return 0;
    }
    const std::vector<int32_t>& dirs = r.tpl->claimed;
    for (size_t run = 0; run < r.tpl->exp.cut.size(); ++run)
      for (size_t k = 0; k < dirs.size(); ++k)
        result_.link_busy_s[dirs[k]] +=
            r.periods->cut_windows(static_cast<int>(run)) * (r.edges[2 * run + 1][k] - r.edges[2 * run][k]);
    return t;
  }

  // A fault stopped task `id` (its GPU failed, or a link on its way went down): the
  // iteration stops here; what runs goes on, nothing new starts.
  void fail(TaskId id) {
    if (!failure_.empty()) return;
    failure_ = "\"" + g_.labels().at(g_.task(id).label) + "\" could not go on";
    failed_at_ = now();
    // Name the fault: a GPU that failed by now (the iteration stopped when it did, as in the
    // analytic engine, even if nothing touched it until later), or else a link that is down.
    for (const auto& [host, at] : faults_.host_fail_s)
      if (at <= now()) {
        failure_ = "GPU " + net_.node(host).name + " failed; " + failure_;
        failed_at_ = std::min(failed_at_, at);
      }
    if (failure_[0] == '"') failure_ += ": a link on its way is down";
  }

  // Never re-entered: start() only schedules timers and activities, it finishes nothing.
  void finish(TaskId id) {
    result_.end_s[id] = now();
    if (sms_.on()) release_sms(id);
    if (auto it = claimed_until_finish_.find(id); it != claimed_until_finish_.end()) {
      guard_->release(id, *it->second);
      claimed_until_finish_.erase(it);
    }
    if (!failure_.empty()) return;  // stopped: nothing new starts
    startable_.clear();
    sched_.finish(id, startable_);
    for (TaskId next : startable_) start(next);
  }

  const TaskGraph& g_;
  const std::set<TaskId>* in_full_;
  const Network& net_;
  const Faults& faults_;
  Fidelity fidelity_;
  bool symmetric_groups_once_;
  int keep_alike_;  // 0: every step played
  std::unique_ptr<CollectiveAlgorithm> algo_;
  StreamScheduler sched_;
  Result result_;
  std::optional<SimGridPlatform> platform_;
  std::optional<SymmetryGuard> guard_;  // when a set is speculated
  std::vector<Slot> slots_;
  std::vector<size_t> free_slots_;
  std::deque<Template> templates_;  // a deque: CommRun keeps pointers into it
  std::map<std::tuple<int, int, int, double, int>, size_t> template_index_;
  std::unordered_map<TaskId, CommRun> comms_;
  std::unordered_map<TaskId, const std::vector<int32_t>*> claimed_until_finish_;  // steps cut
  std::set<TaskId> replay_;  // tasks to play in full in the next run
  std::vector<sg::ActivityPtr> graveyard_;
  std::vector<TaskId> startable_;
  LinkLoad link_load_;              // bytes per link direction, into result_.link_bytes at the end
  std::vector<int> in_flight_;      // per link direction: flows in flight now
  std::vector<double> busy_since_;  // per link direction: when its first flow in flight started
  std::string failure_;
  double failed_at_ = -1;
  SmSharing sms_;
  std::unordered_multimap<TaskId, sg::ExecPtr> kernels_;  // per communication task, its SMs' execs
};

}  // namespace

namespace {

// A run where speculated tasks broke (flow_symmetry.h) is run again with them played in
// full; after this many runs the last plays every speculated set in full.
constexpr int kSpeculatingRuns = 4;

// One simulation in this process; `in_full` as Run's.
Result run_once(const TaskGraph& g, const Network& net, const EngineOptions& o, const std::set<TaskId>* in_full) {
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
  Run run(g, net, o, in_full);
  run.build_platform();
  return run.simulate();
}

}  // namespace

Result SimGridEngine::run(const TaskGraph& g, const Network& net, const EngineOptions& o) const {
  check_options(o);
  if (!o.isolate) return run_here(g, net, o);
  std::set<TaskId> in_full;
  for (int pass = 0;; ++pass) {
    const std::set<TaskId>* speculate = pass < kSpeculatingRuns ? &in_full : nullptr;
    Result r = run_in_child([&] { return run_once(g, net, o, speculate); }, o.timeout_s);
    if (r.replay_in_full.empty()) return r;
    in_full.insert(r.replay_in_full.begin(), r.replay_in_full.end());
  }
}

// In this process there is one run: nothing is speculated.
Result SimGridEngine::run_here(const TaskGraph& g, const Network& net, const EngineOptions& o) {
  return run_once(g, net, o, nullptr);
}

}  // namespace dejavu::sim
