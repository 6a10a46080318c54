#include "strategies/cluster/trace.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "strategies/plan_model.h"
#include "sim/csv.h"
#include "sim/limits.h"
#include "strategies/cluster/placement.h"
#include "strategies/cluster/shared_run.h"
#include "strategies/recompute_modes.h"
#include "strategies/search/evaluator.h"
#include "strategies/search/searcher.h"
#include "workloads/generator.h"

namespace dejavu::strategies::cluster {

namespace {

namespace fs = std::filesystem;

std::string beside(const CsvRow& row, const std::string& column, const std::string& dir) {
  const fs::path p = fs::path(dir) / row.text(column);
  if (!fs::exists(p)) row.fail(column, "no such file: " + p.string());
  return p.string();
}

// Megatron-style degrees from the row: dp = gpus / (tp * pp).
Plan plan_from_columns(const CsvRow& row, int gpus) {
  Plan p;
  p.tp = row.has("tp") ? static_cast<int>(row.as_int("tp", 1, gpus)) : 1;
  p.pp = row.has("pp") ? static_cast<int>(row.as_int("pp", 1, gpus)) : 1;
  if (gpus % (p.tp * p.pp) != 0)
    row.fail("gpus", std::to_string(gpus) + " GPUs do not split into tp " + std::to_string(p.tp) + " x pp " +
                         std::to_string(p.pp) + "; valid: a multiple of tp x pp");
  p.dp = gpus / (p.tp * p.pp);
  p.schedule = "1f1b";
  p.micro_batch_size = row.has("micro_batch") ? static_cast<int>(row.as_int("micro_batch", 1, limits::kMaxBatch)) : 1;
  const long long least = static_cast<long long>(p.dp) * p.micro_batch_size;
  p.global_batch_size = row.has("global_batch") ? static_cast<int>(row.as_int("global_batch", least, limits::kMaxBatch))
                                                : static_cast<int>(least);
  if (p.global_batch_size % least != 0)
    row.fail("global_batch",
             std::to_string(p.global_batch_size) + " is not a multiple of dp x micro_batch = " + std::to_string(least));
  if (row.has("recompute")) p.recompute = row.as_choice("recompute", recompute_mode_names());
  if (row.has("sequence_parallel"))
    p.sequence_parallel = row.as_choice("sequence_parallel", {"false", "true"}) == "true";
  if (row.has("zero")) p.zero = static_cast<int>(row.as_int("zero", 0, 3));
  p.name = "tp" + std::to_string(p.tp) + "-pp" + std::to_string(p.pp) + "-dp" + std::to_string(p.dp);
  return p;
}

// `plan: search`: the best plan the grid finds for the job's GPUs where topology-aware
// packing puts them on the empty cluster, for its global batch; jobs of one workload, size
// and batch share it.
Plan searched_plan(const CsvRow& row, const TraceJob& j, const platforms::Cluster& cluster,
                   std::map<std::string, Plan>& searched) {
  if (!row.has("global_batch")) row.fail("plan", "search needs the job's global_batch column");
  const auto batch = static_cast<int>(row.as_int("global_batch", 1, limits::kMaxBatch));
  const std::string key = j.model->name + " " + std::to_string(j.gpus) + " " + std::to_string(batch);
  if (auto it = searched.find(key); it != searched.end()) return it->second;
  const platforms::Cluster own = job_cluster(cluster, packed_gpus(cluster, j.gpus));
  const search::Problem problem{j.model.get(), &own, batch};
  search::SimulationEvaluator evaluator(problem);
  const search::SearchResult r = search::searchers().make("grid")->search(problem, evaluator, {});
  if (!r.best())
    row.fail("plan", "no plan the grid searches fits " + j.model->name + " on " + std::to_string(j.gpus) +
                         " GPUs with a global batch of " + std::to_string(batch) + "; give the plan");
  Plan p = r.best()->plan;
  p.name = "searched-" + p.name;
  return searched[key] = p;
}

TraceJob read_job(const CsvRow& row, const std::string& dir, const platforms::Cluster& cluster,
                  std::map<std::string, std::shared_ptr<const workloads::ModelGraph>>& models,
                  std::map<std::string, Plan>& searched) {
  TraceJob j;
  j.where = row.loc("name");
  j.name = row.text("name");
  if (j.name.empty()) row.fail("name", "empty; each job needs a name");
  j.submit_s = row.as_double("submit_s", 0, limits::kMaxTime);
  j.gpus = static_cast<int>(row.as_int("gpus", 1, cluster.gpu_count()));
  const std::string workload = beside(row, "workload", dir);
  auto& model = models[workload];
  if (!model) model = std::make_shared<const workloads::ModelGraph>(workloads::load_workload_file(workload));
  j.model = model;
  if (row.has("plan") && row.text("plan") == "search")
    j.plan = searched_plan(row, j, cluster, searched);
  else
    j.plan = row.has("plan") ? load_plan_file(beside(row, "plan", dir)) : plan_from_columns(row, j.gpus);
  if (!j.plan.embedding_sharding.empty())
    j.model = std::make_shared<const workloads::ModelGraph>(model_for_plan(*j.model, j.plan));
  if (const std::string why = why_not_shared(j.plan); !why.empty()) row.fail("plan", why);
  if (j.plan.gpus() != j.gpus)
    row.fail("plan", "its tp*cp*pp*dp is " + std::to_string(j.plan.gpus()) + "; the job takes " +
                         std::to_string(j.gpus) + " GPUs");
  if (row.has("iterations") == row.has("hours"))
    row.fail(row.has("hours") ? "hours" : "iterations", "give the job's length as iterations or hours, one of them");
  if (row.has("iterations")) j.iterations = row.as_int("iterations", 1, 1LL << 50);
  if (row.has("hours")) j.hours = row.as_double("hours", 1e-6, limits::kMaxTime / 3600);
  return j;
}

}  // namespace

Trace load_trace_file(const std::string& path, const platforms::Cluster& cluster) {
  const CsvTable table = CsvTable::load_file(path);
  table.expect_columns({"name", "submit_s", "gpus", "workload"});
  Trace out;
  out.name = fs::path(path).stem().string();
  const std::string dir = fs::path(path).parent_path().string();
  std::map<std::string, std::shared_ptr<const workloads::ModelGraph>> models;
  std::set<std::string> names;
  std::map<std::string, Plan> searched;
  for (const CsvRow& row : table.rows()) {
    TraceJob j = read_job(row, dir, cluster, models, searched);
    if (!names.insert(j.name).second) row.fail("name", "\"" + j.name + "\" is used twice; each job its own name");
    out.jobs.push_back(std::move(j));
  }
  if (out.jobs.empty())
    throw ConfigError(SourceLoc{path, table.header_line(), 1}, "", "no jobs; a trace lists at least one row");
  std::stable_sort(out.jobs.begin(), out.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
  return out;
}

}  // namespace dejavu::strategies::cluster
