#include "strategies/cluster/jobs.h"

#include <filesystem>
#include <set>
#include <utility>

#include "strategies/plan_model.h"
#include "sim/config_node.h"
#include "sim/limits.h"
#include "strategies/cluster/shared_run.h"
#include "workloads/generator.h"

namespace dejavu::strategies::cluster {

namespace {

namespace fs = std::filesystem;

std::string beside(const ConfigNode& file_ref, const std::string& dir) {
  const fs::path p = fs::path(dir) / file_ref.as_string();
  if (!fs::exists(p)) file_ref.fail("no such file: " + p.string());
  return p.string();
}

// The GPUs `servers: [...]` or `gpus: [...]` names, in order, each once.
std::vector<int> listed_gpus(const ConfigNode& job, const platforms::Cluster& cluster) {
  if (job.has("servers") && job.has("gpus"))
    throw ConfigError(job.key_loc("gpus"), job.path() + ".gpus", "give servers or gpus, not both");
  const bool by_server = job.has("servers");
  const ConfigNode list = job.child(by_server ? "servers" : "gpus");
  const int top = by_server ? cluster.server_count() - 1 : cluster.gpu_count() - 1;
  std::set<int> seen;
  std::vector<int> gpus;
  for (const ConfigNode& item : list.items()) {
    const int k = static_cast<int>(item.as_int(0, top));
    if (!seen.insert(k).second)
      item.fail((by_server ? "server " : "GPU ") + std::to_string(k) + " is listed twice; each once");
    if (!by_server) gpus.push_back(k);
    for (int g = 0; by_server && g < cluster.gpu_count(); ++g)
      if (cluster.gpus[g].server == k) gpus.push_back(g);
  }
  if (gpus.empty()) list.fail("no GPUs listed; list servers or GPUs, or leave the key out for --policy");
  return gpus;
}

void check_plan(const ConfigNode& job, const JobSpec& spec, const platforms::Cluster& cluster) {
  const ConfigNode where = job.child("plan");
  if (spec.plan.gpus() > cluster.gpu_count())
    where.fail("the plan needs " + std::to_string(spec.plan.gpus()) + " GPUs; the platform has " +
               std::to_string(cluster.gpu_count()));
  if (const std::string why = why_not_shared(spec.plan); !why.empty()) where.fail(why);
  const char* key = job.has("servers") ? "servers" : "gpus";
  if (!spec.gpus.empty() && static_cast<long long>(spec.gpus.size()) != spec.plan.gpus())
    throw ConfigError(job.key_loc(key), job.path() + "." + key,
                      std::to_string(spec.gpus.size()) + " GPUs listed; the plan's tp*cp*pp*dp is " +
                          std::to_string(spec.plan.gpus()));
}

JobSpec load_job(const ConfigNode& job, size_t index, const std::string& dir, const platforms::Cluster& cluster) {
  job.expect_map({"name", "workload", "plan", "servers", "gpus"});
  JobSpec spec;
  spec.where = job.loc();
  spec.name = job.get_string("name", "job" + std::to_string(index));
  if (spec.name.empty()) job.child("name").fail("an empty name; give the job a name");
  const ConfigNode workload = job.child("workload"), plan = job.child("plan");
  spec.model =
      workload.is_map() ? workloads::load_workload(workload) : workloads::load_workload_file(beside(workload, dir));
  spec.plan = plan.is_map() ? load_plan(plan) : load_plan_file(beside(plan, dir));
  spec.model = model_for_plan(std::move(spec.model), spec.plan);
  if (job.has("servers") || job.has("gpus")) spec.gpus = listed_gpus(job, cluster);
  check_plan(job, spec, cluster);
  return spec;
}

}  // namespace

JobsFile load_jobs_file(const std::string& path, const platforms::Cluster& cluster) {
  const ConfigNode root = ConfigNode::load_file(path);
  root.expect_map({"name", "jobs"});
  JobsFile out;
  out.name = root.get_string("name", root.file_stem());
  const std::string dir = fs::path(path).parent_path().string();
  const std::vector<ConfigNode> jobs = root.child("jobs").items();
  if (jobs.empty()) root.child("jobs").fail("no jobs; list at least one");
  if (jobs.size() > static_cast<size_t>(limits::kMaxGpus)) root.child("jobs").fail("more jobs than GPUs can hold");
  std::set<std::string> names;
  std::vector<std::string> holder(static_cast<size_t>(cluster.gpu_count()));
  for (size_t i = 0; i < jobs.size(); ++i) {
    JobSpec spec = load_job(jobs[i], i, dir, cluster);
    if (!names.insert(spec.name).second)
      jobs[i].child("name").fail("job name \"" + spec.name + "\" is used twice; each job its own");
    for (int g : spec.gpus) {
      if (!holder[g].empty())
        jobs[i].fail("GPU " + std::to_string(g) + " is job " + holder[g] + "'s too; a GPU runs one job");
      holder[g] = spec.name;
    }
    out.jobs.push_back(std::move(spec));
  }
  return out;
}

}  // namespace dejavu::strategies::cluster
