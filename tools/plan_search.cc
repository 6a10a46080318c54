#include "tools/plan_search.h"
#include "tools/platform_input.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "sim/units.h"
#include "strategies/simulate.h"
#include "strategies/search/space.h"
#include "workloads/generator.h"

namespace dejavu::tools {

namespace search = strategies::search;

const search::Candidate* SearchRun::best() const {
  const search::Candidate* best = nullptr;
  for (const auto& r : results)
    if (r.best() && (!best || r.best()->score.cost() < best->score.cost())) best = r.best();
  return best;
}

namespace {

void draw_bar(const std::string& algo, const search::Progress& p) {
  char buf[200];
  if (p.total > 0) {
    const int width = 30, filled = static_cast<int>(width * p.done / p.total);
    std::snprintf(buf, sizeof buf, "\r%-5s [%s%s] %ld/%ld  best %s   ", algo.c_str(), std::string(filled, '#').c_str(),
                  std::string(width - filled, '.').c_str(), p.done, p.total,
                  p.best_s > 0 ? units::format_time(p.best_s).c_str() : "-");
  } else {
    std::snprintf(buf, sizeof buf, "\r%-5s %ld  best %s   ", algo.c_str(), p.done,
                  p.best_s > 0 ? units::format_time(p.best_s).c_str() : "-");
  }
  std::cerr << buf << std::flush;
}

}  // namespace

SearchRun run_search(const SearchArgs& a) {
  const platforms::Cluster cluster = load_platform(a.platform, a.calibrations);
  const workloads::ModelGraph model = workloads::load_workload_file(a.workload);
  std::vector<std::string> algos;
  if (a.algo == "all") {
    algos = search::searchers().names();
  } else if (search::searchers().has(a.algo)) {
    algos = {a.algo};
  } else {
    throw ConfigError(SourceLoc{"--algo", 0, 0}, "",
                      "unknown searcher \"" + a.algo + "\"; valid: " + search::searchers().names_joined() + ", all");
  }
  if (!a.verify.empty() && a.verify != "simgrid" && a.verify != "analytic")
    throw ConfigError(SourceLoc{"--verify", 0, 0}, "", "unknown engine \"" + a.verify + "\"; valid: simgrid, analytic");
  search::Problem problem{&model, &cluster, a.global_batch > 0 ? a.global_batch : model.global_batch_size};
  if (problem.global_batch <= 0)
    throw ConfigError(SourceLoc{a.workload, 0, 0}, "global_batch_size",
                      "the training job's global batch is not set; give --global-batch N or global_batch_size in the workload YAML");
  search::SearchOptions options;
  options.seed = a.seed;
  options.top = a.top;
  options.iterations = a.iterations;
  if (!a.budget.empty()) {
    try {
      options.budget_s = units::parse_time(a.budget);
    } catch (const Error& e) {
      throw ConfigError(SourceLoc{"--budget", 0, 0}, "", std::string(e.what()) + " (e.g. 30s, 2 min)");
    }
    if (options.budget_s <= 0) throw ConfigError(SourceLoc{"--budget", 0, 0}, "", "expected a positive time, e.g. 30s");
  }
  const bool bar = a.progress && isatty(STDERR_FILENO);
  SearchRun run;
  run.platform = cluster.name;
  run.workload = model.name;
  run.gpus = cluster.gpu_count();
  run.global_batch = problem.global_batch;
  // --- same problem, same cost model, a fresh cache per searcher so their times compare.
  // (The copies of model and cluster live in this frame; results hold plans only.)
  for (const std::string& name : algos) {
    search::SimulationEvaluator evaluator(problem);
    if (bar) options.progress = [&](const search::Progress& p) { draw_bar(name, p); };
    run.results.push_back(search::searchers().make(name)->search(problem, evaluator, options));
    if (bar) std::cerr << "\r" << std::string(70, ' ') << "\r" << std::flush;
  }
  if (!a.verify.empty()) {
    for (const auto& r : run.results) {
      run.verified.emplace_back();
      for (const auto& c : r.top) {
        VerifiedPlan v;
        v.engine = a.verify;
        try {
          v.iteration_time_s = strategies::simulate(model, cluster, c.plan, a.verify).report.iteration_time_s;
        } catch (const Error& e) {
          v.error = e.what();
        }
        run.verified.back().push_back(v);
      }
    }
  }
  return run;
}

void write_search_table(std::ostream& out, const SearchRun& run) {
  char buf[512];
  out << "dejavu search: " << run.workload << " on " << run.platform << " (" << run.gpus << " GPUs), global batch "
      << run.global_batch << "\n";
  const search::Candidate* best = run.best();
  for (size_t i = 0; i < run.results.size(); ++i) {
    const auto& r = run.results[i];
    std::snprintf(buf, sizeof buf, "\n%s: %ld evaluations (%ld simulated) in %s%s; %s\n", r.algorithm.c_str(),
                  r.evaluations, r.simulations, units::format_time(r.wall_s).c_str(),
                  r.budget_exhausted ? ", stopped by the budget" : "", r.note.c_str());
    out << buf;
    if (r.top.empty()) {
      out << "  no plan fits in memory\n";
      continue;
    }
    const bool verified = i < run.verified.size();
    std::snprintf(buf, sizeof buf, "  %-3s %-58s %-11s %-13s %-11s %-5s%s\n", "#", "plan", "iteration", "tokens/s",
                  "peak mem", "fits", verified ? (" " + run.verified[i].front().engine).c_str() : "");
    out << buf;
    for (size_t k = 0; k < r.top.size(); ++k) {
      const auto& c = r.top[k];
      std::string check;
      if (verified) {
        const VerifiedPlan& v = run.verified[i][k];
        check = v.error.empty() ? " " + units::format_time(v.iteration_time_s) : " failed: " + v.error;
      }
      std::snprintf(buf, sizeof buf, "  %-3zu %-58s %-11s %-13.4g %-11s %-5s%s\n", k + 1,
                    search::describe(c.plan).c_str(), units::format_time(c.score.iteration_time_s).c_str(),
                    c.score.tokens_per_s, units::format_bytes(c.score.peak_memory_bytes).c_str(),
                    c.score.fits ? "yes" : "no", check.c_str());
      out << buf;
    }
  }
  if (run.results.size() > 1 && best) {
    out << "\n  searcher  best iteration  vs best   wall        evaluations\n";
    for (const auto& r : run.results) {
      if (!r.best()) {
        std::snprintf(buf, sizeof buf, "  %-9s %-15s\n", r.algorithm.c_str(), "none fits");
      } else {
        std::snprintf(buf, sizeof buf, "  %-9s %-15s %+6.2f%%   %-11s %ld\n", r.algorithm.c_str(),
                      units::format_time(r.best()->score.iteration_time_s).c_str(),
                      100 * (r.best()->score.cost() / best->score.cost() - 1), units::format_time(r.wall_s).c_str(),
                      r.evaluations);
      }
      out << buf;
    }
  }
}

namespace {
nlohmann::json plan_json(const strategies::Plan& p) {
  nlohmann::json j = {{"tp", p.tp},
                      {"pp", p.pp},
                      {"dp", p.dp},
                      {"micro_batch_size", p.micro_batch_size},
                      {"global_batch_size", p.global_batch_size},
                      {"schedule", p.schedule},
                      {"virtual_stages", p.virtual_stages},
                      {"recompute", p.recompute},
                      {"sequence_parallel", p.sequence_parallel},
                      {"zero", p.zero}};
  if (!p.stages.empty()) j["stages"] = p.stages;
  return j;
}
nlohmann::json candidate_json(const search::Candidate& c) {
  return {{"plan", plan_json(c.plan)},
          {"description", search::describe(c.plan)},
          {"iteration_time_s", c.score.iteration_time_s},
          {"tokens_per_s", c.score.tokens_per_s},
          {"peak_memory_bytes", c.score.peak_memory_bytes},
          {"capacity_bytes", c.score.capacity_bytes},
          {"fits", c.score.fits}};
}
}  // namespace

void write_search_json(std::ostream& out, const SearchRun& run) {
  nlohmann::json j;
  j["platform"] = run.platform;
  j["workload"] = run.workload;
  j["gpus"] = run.gpus;
  j["global_batch_size"] = run.global_batch;
  j["searches"] = nlohmann::json::array();
  for (size_t i = 0; i < run.results.size(); ++i) {
    const auto& r = run.results[i];
    nlohmann::json s = {{"algorithm", r.algorithm},     {"evaluations", r.evaluations},
                        {"simulations", r.simulations}, {"wall_s", r.wall_s},
                        {"budget_exhausted", r.budget_exhausted}, {"note", r.note}};
    s["top"] = nlohmann::json::array();
    for (size_t k = 0; k < r.top.size(); ++k) {
      nlohmann::json c = candidate_json(r.top[k]);
      if (i < run.verified.size()) {
        const VerifiedPlan& v = run.verified[i][k];
        c["verified"] = {{"engine", v.engine}, {"iteration_time_s", v.error.empty() ? nlohmann::json(v.iteration_time_s) : nlohmann::json()}};
        if (!v.error.empty()) c["verified"]["error"] = v.error;
      }
      s["top"].push_back(c);
    }
    s["best"] = r.best() ? candidate_json(*r.best()) : nlohmann::json();
    j["searches"].push_back(s);
  }
  j["best"] = run.best() ? candidate_json(*run.best()) : nlohmann::json();
  out << j.dump(2) << "\n";
}

}  // namespace dejavu::tools
