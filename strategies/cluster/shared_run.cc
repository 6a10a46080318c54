#include "strategies/cluster/shared_run.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "strategies/cluster/placement.h"
#include "strategies/lowering.h"
#include "strategies/report.h"
#include "strategies/schedules/schedule.h"

namespace dejavu::strategies::cluster {

double ContestedLink::total() const {
  double t = 0;
  for (const auto& [job, bytes] : bytes_per_step) t += bytes;
  return t;
}

std::vector<std::vector<int>> place_jobs(const JobsFile& jobs, const platforms::Cluster& cluster,
                                         const std::string& policy, uint64_t seed) {
  std::vector<char> free(static_cast<size_t>(cluster.gpu_count()), 1);
  std::vector<std::vector<int>> out(jobs.jobs.size());
  for (size_t j = 0; j < jobs.jobs.size(); ++j)
    for (int g : out[j] = jobs.jobs[j].gpus) free[g] = 0;
  const auto placer = placement_policies().make(policy);
  const ClusterShape shape = shape_of(cluster);
  sim::Rng rng(seed);
  for (size_t j = 0; j < jobs.jobs.size(); ++j) {
    const JobSpec& job = jobs.jobs[j];
    if (!job.gpus.empty()) continue;
    out[j] = placer->place(shape, free, job.gpu_count(), rng);
    if (out[j].empty())
      throw ConfigError(job.where, "jobs[" + std::to_string(j) + "]",
                        "job " + job.name + " needs " + std::to_string(job.gpu_count()) + " GPUs; " +
                            std::to_string(std::count(free.begin(), free.end(), 1)) +
                            " are left free; valid: jobs whose GPUs add up to at most the platform's " +
                            std::to_string(cluster.gpu_count()));
    for (int g : out[j]) free[g] = 0;
  }
  return out;
}

namespace {

// A job's graph run `repeats` times in a row inside `merged`: a zero-time barrier task
// before each repeat waits for the previous one's sinks and holds back its roots.
// Returns, per repeat, the ids of its tasks in `merged` (first, count).
std::vector<std::pair<sim::TaskId, size_t>> append_repeats(sim::TaskGraph& merged, const sim::TaskGraph& step,
                                                           const std::string& prefix, int repeats) {
  std::vector<std::pair<sim::TaskId, size_t>> out;
  std::vector<sim::TaskId> sinks;
  for (int k = 0; k < repeats; ++k) {
    const sim::TaskId first = merged.append(step, prefix);
    const auto dev = sim::DeviceId(merged.task(first).device);
    const sim::TaskId barrier = merged.add_compute(dev, merged.stream("cluster"), 0, merged.label("step boundary"), -1);
    for (sim::TaskId s : sinks) merged.depend(s, barrier);
    sinks.clear();
    for (size_t i = 0; i < step.size(); ++i) {
      const auto id = static_cast<sim::TaskId>(i);
      if (step.indegree()[i] == 0) merged.depend(barrier, first + id);
      if (step.succ_begin()[i] == step.succ_begin()[i + 1]) sinks.push_back(first + id);
    }
    out.emplace_back(first, step.size());
  }
  return out;
}

// The time the transfers and collectives of one run of `step` took, its task i being
// task first + i of the result.
double comm_time(const sim::TaskGraph& step, const sim::Result& r, sim::TaskId first) {
  double t = 0;
  for (size_t i = 0; i < step.size(); ++i) {
    const auto id = static_cast<sim::TaskId>(i);
    if (step.task(id).kind != sim::TaskKind::Compute) t += r.end_s[first + id] - r.start_s[first + id];
  }
  return t;
}

double end_of(const sim::Result& r, sim::TaskId first, size_t count) {
  double end = 0;
  for (size_t i = 0; i < count; ++i) end = std::max(end, r.end_s[first + static_cast<sim::TaskId>(i)]);
  return end;
}

// Link directions two or more jobs load when alone, the most loaded first.
std::vector<ContestedLink> contested_links(const sim::Network& net, const std::vector<const AloneRun*>& jobs) {
  std::map<int, ContestedLink> by_direction;
  for (const AloneRun* a : jobs)
    for (const auto& [d, bytes] : a->link_bytes) by_direction[d].bytes_per_step.emplace_back(a->run.name, bytes);
  std::vector<ContestedLink> out;
  for (auto& [d, c] : by_direction) {
    if (c.bytes_per_step.size() < 2) continue;
    const sim::Link& l = net.link(d / 2);
    const bool forward = d % 2 == 0;
    c.name = net.node(forward ? l.a : l.b).name + " -> " + net.node(forward ? l.b : l.a).name;
    out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.total() > b.total(); });
  if (out.size() > 10) out.resize(10);
  return out;
}

}  // namespace

std::string why_not_shared(const Plan& plan) {
  if (!schedules().make(plan.schedule)->flushes() && plan.pp > 1)
    return "schedule " + plan.schedule +
           " does not flush: its step is a steady state, not one run beside other jobs; valid: a flushing schedule "
           "(gpipe, 1f1b, interleaved-1f1b, zb-h1, chimera, terapipe)";
  if (plan.data_parallel.delay > 0)
    return "delayed averaging's step is a steady state, not one run beside other jobs; valid: delay 0";
  if (plan.use_gpus > 0)
    return "its gpus: a job's GPUs are where the jobs file or trace places it, not its plan's; drop gpus";
  return "";
}

AloneRun run_alone(const workloads::ModelGraph& model, const Plan& plan, const std::string& name,
                   const std::vector<int>& gpus, const platforms::Cluster& cluster, const SharedRunOptions& o) {
  const platforms::Cluster own = job_cluster(cluster, gpus, plan.gpu_order);
  LowerOptions lo;
  lo.collective_algorithm = o.options.collective_algorithm;
  lo.fuse_items = o.fuse_items;
  const LoweredJob job = lower(model, own, plan, lo);
  const sim::Result result = sim::engines().make(o.engine)->run(job.graph, cluster.network, o.options);
  const Report report = make_report(model, own, plan, job, result);
  AloneRun a;
  a.run.name = name;
  a.run.workload = model.name;
  a.run.plan = plan.name;
  a.run.gpus = gpus;
  a.run.alone_s = result.makespan_s;
  a.run.comm_alone_s = comm_time(job.graph, result, 0);
  a.run.peak_memory_bytes = report.peak_memory_bytes;
  a.run.capacity_bytes = report.capacity_bytes;
  for (size_t d = 0; d < result.link_bytes.size(); ++d)
    if (result.link_bytes[d] > 0) {
      a.link_bytes.emplace_back(static_cast<int>(d), result.link_bytes[d]);
      const auto& peak = result.link_peak_demand_Bps;
      a.peak_demand.push_back(d < peak.size() ? peak[d] : std::numeric_limits<double>::infinity());
    }
  a.graph = job.graph;
  return a;
}

SharedRun run_together(const std::vector<const AloneRun*>& jobs, const platforms::Cluster& cluster,
                       const SharedRunOptions& o) {
  SharedRun run;
  run.engine = o.engine;
  run.platform = cluster.name;
  double longest = 0;
  for (const AloneRun* a : jobs) {
    run.jobs.push_back(a->run);
    longest = std::max(longest, a->run.alone_s);
  }
  run.contested = contested_links(cluster.network, jobs);
  sim::TaskGraph merged;
  std::vector<std::vector<std::pair<sim::TaskId, size_t>>> repeats;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const double per = run.jobs[j].alone_s;
    const double want = per > 0 ? std::ceil(o.steps * longest / per - 1e-9) : o.steps;
    const double most = std::max(o.steps, o.max_repeats);
    run.jobs[j].steps_run = static_cast<int>(std::clamp(want, static_cast<double>(o.steps), most));
    repeats.push_back(append_repeats(merged, jobs[j]->graph, run.jobs[j].name + "/", run.jobs[j].steps_run));
  }
  merged.finalize();
  const sim::Result together = sim::engines().make(o.engine)->run(merged, cluster.network, o.options);
  run.activities = together.activities;
  run.window_s = std::numeric_limits<double>::infinity();
  for (const auto& rep : repeats)
    run.window_s = std::min(run.window_s, end_of(together, rep.back().first, rep.back().second));
  for (size_t j = 0; j < jobs.size(); ++j) {
    JobRun& r = run.jobs[j];
    double begin = 0, sum = 0, comm = 0;
    for (const auto& [first, count] : repeats[j]) {
      const double end = end_of(together, first, count);
      if (end > run.window_s * (1 + 1e-12) && r.steps_measured > 0) break;
      sum += end - begin;
      comm += comm_time(jobs[j]->graph, together, first);
      ++r.steps_measured;
      begin = end;
    }
    r.together_s = sum / r.steps_measured;
    r.comm_together_s = comm / r.steps_measured;
  }
  return run;
}

SharedRun run_shared(const JobsFile& jobs, const platforms::Cluster& cluster, const SharedRunOptions& o) {
  const std::vector<std::vector<int>> gpus = place_jobs(jobs, cluster, o.policy, o.seed);
  std::vector<AloneRun> alone;
  for (size_t j = 0; j < jobs.jobs.size(); ++j)
    alone.push_back(run_alone(jobs.jobs[j].model, jobs.jobs[j].plan, jobs.jobs[j].name, gpus[j], cluster, o));
  std::vector<const AloneRun*> all;
  for (const AloneRun& a : alone) all.push_back(&a);
  SharedRun run = run_together(all, cluster, o);
  run.jobs_name = jobs.name;
  return run;
}

}  // namespace dejavu::strategies::cluster
