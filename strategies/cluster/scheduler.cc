#include "strategies/cluster/scheduler.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <queue>
#include <sstream>

#include "strategies/cluster/placement.h"
#include "strategies/lowering.h"
#include "strategies/plan.h"
#include "strategies/recovery/recovery_policy.h"

namespace dejavu::strategies::cluster {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Running {
  int job = -1;
  std::vector<int> gpus;
  Plan plan;  // the trace's, or fewer data-parallel replicas after an elastic shrink
  std::shared_ptr<const AloneRun> alone;
  double step_s = 0;        // its step now, beside its co-runners
  double done = 0;          // iterations, fractional
  double since_ckpt_s = 0;  // running time since its last checkpoint
  double paused_until = 0;  // restarting or swapping in a spare: no progress before
};

// What a job needs across restarts.
struct JobState {
  double iterations = 0;  // 0 until its first start (hours: known from its step alone)
  double done = 0;        // kept across a restart (what its checkpoint holds)
  bool restarting = false;
  double ckpt_interval_s = kInf, ckpt_write_s = 0;
  double run_s = 0, weighted_s = 0;  // time stepping, and that time x (step / alone step)
};

using Failure = std::pair<double, int>;  // time, GPU

class Scheduler {
 public:
  Scheduler(const Trace& trace, const platforms::Cluster& cluster, const ScheduleOptions& o)
      : trace_(trace),
        cluster_(cluster),
        o_(o),
        shape_(shape_of(cluster)),
        placer_(placement_policies().make(o.policy)),
        rng_(o.seed),
        states_(trace.jobs.size()),
        up_(static_cast<size_t>(cluster.gpu_count()), 1),
        busy_(up_.size(), 0) {
    out_.jobs.resize(trace.jobs.size());
    for (size_t j = 0; j < trace.jobs.size(); ++j) {
      out_.jobs[j].name = trace.jobs[j].name;
      out_.jobs[j].plan = trace.jobs[j].plan.name;
      out_.jobs[j].gpus = trace.jobs[j].gpus;
      out_.jobs[j].submit_s = trace.jobs[j].submit_s;
    }
    if (o.faults) schedule_failures(*o.faults);
  }

  ScheduleResult run();

 private:
  void schedule_failures(const FaultScenario& s);
  double next_event() const;
  // Its step with its checkpoints' writes spread over it.
  double effective_step(const Running& r) const {
    return r.step_s * (1 + states_[r.job].ckpt_write_s / states_[r.job].ckpt_interval_s);
  }
  double end_of(const Running& r) const {
    return std::max(t_, r.paused_until) + (states_[r.job].iterations - r.done) * effective_step(r);
  }
  std::vector<char> free_gpus() const {  // up and running no job
    std::vector<char> free(up_.size());
    for (size_t g = 0; g < free.size(); ++g) free[g] = up_[g] && !busy_[g];
    return free;
  }
  void advance(double to);
  bool finish_jobs();
  bool fail_gpus();
  bool repair_gpus();
  bool start_jobs();
  void start(int job, std::vector<int> gpus, double pause_s, const Plan* plan = nullptr);
  bool shrink(const Running& r, int gpu);
  void fail_job(size_t running, int gpu);
  void update_steps();
  double ideal_step(int job);
  bool may_contend(const std::vector<const AloneRun*>& runs) const;
  std::shared_ptr<const AloneRun> alone(int job, const std::vector<int>& gpus, const Plan& plan);
  void set_checkpoints(int job);

  const Trace& trace_;
  const platforms::Cluster& cluster_;
  const ScheduleOptions& o_;
  ClusterShape shape_;
  std::unique_ptr<PlacementPolicy> placer_;
  sim::Rng rng_;
  std::vector<JobState> states_;
  std::vector<char> up_, busy_;
  std::vector<Running> running_;
  std::deque<int> queue_;
  size_t arrived_ = 0;
  double t_ = 0;
  std::priority_queue<Failure, std::vector<Failure>, std::greater<>> failures_, repairs_;
  sim::Rng failure_rng_{1};
  std::map<std::pair<int, std::vector<int>>, std::shared_ptr<const AloneRun>> alone_runs_;
  std::map<std::vector<std::pair<int, std::vector<int>>>, std::vector<double>> together_;
  std::map<std::string, double> ideal_;  // ideal_step()'s, by workload and plan
  ScheduleResult out_;
};

void Scheduler::schedule_failures(const FaultScenario& s) {
  failure_rng_.seed(s.seed);
  for (const FaultEvent& e : s.events) {
    if (e.kind == "gpu_fail") failures_.emplace(e.at_s, e.gpu);
    for (int g = 0; e.kind == "server_fail" && g < cluster_.gpu_count(); ++g)
      if (cluster_.gpus[g].server == e.server) failures_.emplace(e.at_s, g);
  }
  for (int g = 0; s.mtbf_s > 0 && g < cluster_.gpu_count(); ++g)
    failures_.emplace(-std::log(1 - sim::uniform(failure_rng_)) * s.mtbf_s, g);
}

double Scheduler::next_event() const {
  double t = arrived_ < trace_.jobs.size() ? trace_.jobs[arrived_].submit_s : kInf;
  for (const Running& r : running_) t = std::min(t, end_of(r));
  // Failures and repairs matter while a job is yet to end.
  if (t < kInf || !running_.empty() || !queue_.empty()) {
    if (!failures_.empty()) t = std::min(t, failures_.top().first);
    if (!repairs_.empty()) t = std::min(t, repairs_.top().first);
  }
  return std::max(t, t_);
}

void Scheduler::advance(double to) {
  for (Running& r : running_) {
    JobState& s = states_[r.job];
    const double run = std::max(0.0, to - std::max(t_, r.paused_until));
    r.done = std::min(s.iterations, r.done + run / effective_step(r));
    r.since_ckpt_s = std::fmod(r.since_ckpt_s + run, s.ckpt_interval_s);
    s.run_s += run;
    s.weighted_s += run * r.step_s / r.alone->run.alone_s;
    out_.jobs[r.job].held_gpu_s += (to - t_) * static_cast<double>(r.gpus.size());
  }
  t_ = to;
}

std::shared_ptr<const AloneRun> Scheduler::alone(int job, const std::vector<int>& gpus, const Plan& plan) {
  auto& slot = alone_runs_[{job, gpus}];  // a plan's GPU count is its GPUs': one plan per key
  if (!slot) {
    const TraceJob& j = trace_.jobs[job];
    slot = std::make_shared<const AloneRun>(run_alone(*j.model, plan, j.name, gpus, cluster_, o_.run));
    ++out_.alone_runs;
  }
  return slot;
}

// Its step alone where topology-aware packing puts it on the empty cluster; jobs of one
// workload and plan share it.
double Scheduler::ideal_step(int job) {
  const TraceJob& j = trace_.jobs[job];
  const Plan& p = j.plan;
  std::ostringstream key;
  key << j.model.get() << " " << p.name << " " << p.file << " " << p.tp << " " << p.pp << " " << p.dp << " "
      << p.micro_batch_size << " " << p.global_batch_size << " " << p.recompute << " " << p.sequence_parallel << " "
      << p.zero;
  auto [it, fresh] = ideal_.try_emplace(key.str(), 0.0);
  if (fresh) {
    it->second = run_alone(*j.model, p, j.name, packed_gpus(cluster_, j.gpus), cluster_, o_.run).run.alone_s;
    ++out_.alone_runs;
  }
  return it->second;
}

// Young's interval for the job's MTBF (the GPUs' over its count), its write its model
// states over the storage bandwidth; the scenario's interval if it gives one.
void Scheduler::set_checkpoints(int job) {
  JobState& s = states_[job];
  const TraceJob& j = trace_.jobs[job];
  if (!o_.faults) return;
  const ModelStateBytes state = model_state_per_param(j.model->dtype, 0, 1);
  s.ckpt_write_s = j.model->parameter_count() * (state.weights + state.optimizer) / cluster_.storage_bandwidth_Bps;
  if (o_.faults->recovery.interval_s > 0)
    s.ckpt_interval_s = o_.faults->recovery.interval_s;
  else if (o_.faults->mtbf_s > 0)
    s.ckpt_interval_s = std::sqrt(2 * s.ckpt_write_s * o_.faults->mtbf_s / j.gpus);
}

void Scheduler::start(int job, std::vector<int> gpus, double pause_s, const Plan* plan) {
  for (int g : gpus) busy_[g] = 1;
  Running r;
  r.job = job;
  r.plan = plan ? *plan : trace_.jobs[job].plan;
  r.alone = alone(job, gpus, r.plan);
  r.gpus = std::move(gpus);
  r.step_s = r.alone->run.alone_s;
  r.paused_until = t_ + pause_s;
  JobState& s = states_[job];
  JobOutcome& out = out_.jobs[job];
  if (out.start_s < 0) {
    out.start_s = t_;
    out.alone_step_s = r.step_s;
    out.ideal_step_s = ideal_step(job);
    const TraceJob& j = trace_.jobs[job];
    s.iterations =
        j.iterations > 0 ? static_cast<double>(j.iterations) : std::ceil(j.hours * 3600 / out.ideal_step_s - 1e-9);
    out.iterations = s.iterations;
    set_checkpoints(job);
  }
  r.done = s.done;
  running_.push_back(std::move(r));
}

// First come, first served: the head of the queue starts when the policy finds it GPUs
// among the free ones that are up; nothing behind it overtakes it.
bool Scheduler::start_jobs() {
  bool changed = false;
  while (!queue_.empty()) {
    const int job = queue_.front();
    std::vector<int> gpus = placer_->place(shape_, free_gpus(), trace_.jobs[job].gpus, rng_);
    if (gpus.empty()) break;
    queue_.pop_front();
    const bool restart = states_[job].restarting;
    states_[job].restarting = false;
    start(job, std::move(gpus), restart ? o_.faults->recovery.restart_s : 0);
    changed = true;
  }
  return changed;
}

bool Scheduler::finish_jobs() {
  bool changed = false;
  for (size_t i = 0; i < running_.size();) {
    Running& r = running_[i];
    if (r.done < states_[r.job].iterations * (1 - 1e-12) && end_of(r) > t_ * (1 + 1e-12)) {
      ++i;
      continue;
    }
    out_.jobs[r.job].end_s = t_;
    for (int g : r.gpus) busy_[g] = 0;
    running_.erase(running_.begin() + static_cast<long>(i));
    changed = true;
  }
  return changed;
}

// The job on a failed GPU rolls back to its checkpoint and recovers by the policy.
void Scheduler::fail_job(size_t i, int gpu) {
  Running r = std::move(running_[i]);
  running_.erase(running_.begin() + static_cast<long>(i));
  JobState& s = states_[r.job];
  const double lost = std::min(r.done, r.since_ckpt_s / effective_step(r));
  s.done = r.done - lost;
  ++out_.jobs[r.job].failures;
  out_.jobs[r.job].lost_s += lost * r.step_s;
  for (int g : r.gpus) busy_[g] = 0;
  int spares = std::numeric_limits<int>::max();
  const RecoveryAction action = recovery_policies().make(o_.faults->recovery.policy)->on_failure(spares);
  if (action == RecoveryAction::Shrink && shrink(r, gpu)) return;
  if (action == RecoveryAction::SwapSpare) {
    std::vector<char> free = free_gpus();
    for (int g : r.gpus) free[g] = 0;  // its own, freed above: it keeps them
    const std::vector<int> spare = placer_->place(shape_, free, 1, rng_);
    if (!spare.empty()) {
      std::vector<int> gpus = r.gpus;
      std::replace(gpus.begin(), gpus.end(), gpu, spare[0]);
      start(r.job, std::move(gpus), o_.faults->recovery.swap_s);
      return;
    }
  }
  s.restarting = true;
  queue_.push_front(r.job);
}

// Elastic: the job goes on without the failed GPU's server, with the most data-parallel
// replicas its other GPUs hold that still divide the global batch, after `restart`. False
// when not one replica is left.
bool Scheduler::shrink(const Running& r, int gpu) {
  std::vector<int> keep;
  for (int g : r.gpus)
    if (cluster_.gpus[g].server != cluster_.gpus[gpu].server) keep.push_back(g);
  Plan p = r.plan;
  const int per = static_cast<int>(p.tp_sum()) * p.cp;  // GPUs per replica, every stage's
  for (int dp = std::min(p.dp - 1, static_cast<int>(keep.size()) / per); dp >= 1; --dp) {
    if (p.global_batch_size % (dp * p.micro_batch_size) != 0 || dp % p.ep != 0) continue;
    p.dp = dp;
    std::vector<int> gpus(keep.begin(), keep.begin() + dp * per);
    try {
      validate(p, *trace_.jobs[r.job].model, job_cluster(cluster_, gpus, p.gpu_order));
    } catch (const ConfigError&) {
      continue;  // a plan rule this size breaks (pipeline microbatches, ...): fewer replicas
    }
    start(r.job, gpus, o_.faults->recovery.restart_s, &p);
    return true;
  }
  return false;
}

bool Scheduler::fail_gpus() {
  bool changed = false;
  while (!failures_.empty() && failures_.top().first <= t_) {
    const int g = failures_.top().second;
    failures_.pop();
    if (!up_[g]) continue;  // already down
    up_[g] = 0;
    ++out_.failures;
    repairs_.emplace(t_ + o_.repair_s, g);
    for (size_t i = 0; i < running_.size(); ++i)
      if (std::find(running_[i].gpus.begin(), running_[i].gpus.end(), g) != running_[i].gpus.end()) {
        fail_job(i, g);
        changed = true;
        break;
      }
  }
  return changed;
}

bool Scheduler::repair_gpus() {
  bool changed = false;
  while (!repairs_.empty() && repairs_.top().first <= t_) {
    const int g = repairs_.top().second;
    repairs_.pop();
    up_[g] = 1;
    changed = true;
    if (o_.faults && o_.faults->mtbf_s > 0)
      failures_.emplace(t_ - std::log(1 - sim::uniform(failure_rng_)) * o_.faults->mtbf_s, g);
  }
  return changed;
}

// Whether some link direction two of the jobs load could be asked for more than its
// bandwidth at once: else each steps as alone (the engine would give every task its whole
// demand).
bool Scheduler::may_contend(const std::vector<const AloneRun*>& runs) const {
  std::map<int, std::pair<int, double>> links;  // direction -> (jobs, summed peak demand)
  for (const AloneRun* a : runs)
    for (size_t k = 0; k < a->link_bytes.size(); ++k) {
      auto& [jobs, demand] = links[a->link_bytes[k].first];
      ++jobs;
      demand += a->peak_demand[k];
    }
  for (const auto& [d, use] : links)
    if (use.first > 1 && use.second > cluster_.network.link(d / 2).bandwidth_Bps * (1 + 1e-9)) return true;
  return false;
}

// Jobs whose alone traffic shares a link direction run together (once per such set and
// placements); the others at their step alone.
void Scheduler::update_steps() {
  std::vector<size_t> root(running_.size());
  std::iota(root.begin(), root.end(), 0);
  const auto find = [&](size_t x) {
    while (root[x] != x) x = root[x] = root[root[x]];
    return x;
  };
  std::map<int, size_t> owner;
  for (size_t i = 0; i < running_.size(); ++i)
    for (const auto& [d, bytes] : running_[i].alone->link_bytes)
      if (auto [it, fresh] = owner.emplace(d, i); !fresh) root[find(i)] = find(it->second);
  std::map<size_t, std::vector<size_t>> groups;
  for (size_t i = 0; i < running_.size(); ++i) groups[find(i)].push_back(i);
  for (auto& [r, members] : groups) {
    if (members.size() == 1) {
      running_[members[0]].step_s = running_[members[0]].alone->run.alone_s;
      continue;
    }
    std::sort(members.begin(), members.end(), [&](size_t a, size_t b) { return running_[a].job < running_[b].job; });
    std::vector<std::pair<int, std::vector<int>>> key;
    std::vector<const AloneRun*> runs;
    for (size_t i : members) {
      key.emplace_back(running_[i].job, running_[i].gpus);
      runs.push_back(running_[i].alone.get());
    }
    auto& steps = together_[key];
    if (steps.empty()) {
      if (may_contend(runs)) {
        for (const JobRun& j : run_together(runs, cluster_, o_.run).jobs) steps.push_back(j.together_s);
        ++out_.shared_runs;
      } else {
        for (const AloneRun* a : runs) steps.push_back(a->run.alone_s);
      }
    }
    for (size_t k = 0; k < members.size(); ++k) running_[members[k]].step_s = steps[k];
  }
}

ScheduleResult Scheduler::run() {
  const size_t n = trace_.jobs.size(), most_events = 1000 * n + 1000000;
  while (arrived_ < n || !running_.empty() || !queue_.empty()) {
    advance(next_event());
    bool changed = finish_jobs();
    changed = fail_gpus() || changed;
    changed = repair_gpus() || changed;
    while (arrived_ < n && trace_.jobs[arrived_].submit_s <= t_) queue_.push_back(static_cast<int>(arrived_++));
    changed = start_jobs() || changed;
    if (changed) update_steps();
    if (++out_.events > most_events)
      throw ModelError("the cluster made no progress in " + std::to_string(most_events) +
                       " events at t = " + std::to_string(t_) + " s");
  }
  double held = 0, useful = 0;
  for (size_t j = 0; j < n; ++j) {
    JobOutcome& job = out_.jobs[j];
    out_.makespan_s = std::max(out_.makespan_s, job.end_s);
    held += job.held_gpu_s;
    useful += job.iterations * job.ideal_step_s * job.gpus;
    job.interference = states_[j].run_s > 0 ? states_[j].weighted_s / states_[j].run_s : 1;
  }
  out_.gpus = cluster_.gpu_count();
  out_.utilisation = out_.makespan_s > 0 ? held / (out_.gpus * out_.makespan_s) : 0;
  out_.goodput = held > 0 ? useful / held : 0;
  return out_;
}

}  // namespace

ScheduleResult run_schedule(const Trace& trace, const platforms::Cluster& cluster, const ScheduleOptions& o) {
  Scheduler s(trace, cluster, o);
  ScheduleResult r = s.run();
  r.policy = o.policy;
  r.engine = o.run.engine;
  r.trace = trace.name;
  r.platform = cluster.name;
  return r;
}

}  // namespace dejavu::strategies::cluster
