#include "tools/plan_search.h"
#include "sim/json_text.h"
#include "tools/platform_input.h"

#include <algorithm>
#include <cmath>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "platforms/cluster_part.h"
#include "platforms/gpu_order.h"
#include "sim/units.h"
#include "strategies/simulate.h"
#include "strategies/training/time_to_accuracy.h"
#include "strategies/plan_cluster.h"
#include "strategies/plan_model.h"
#include "strategies/search/cluster_parts.h"
#include "strategies/search/gpu_orders.h"
#include "strategies/search/rerank.h"
#include "strategies/search/space.h"
#include "workloads/generator.h"

namespace dejavu::tools {

namespace search = strategies::search;

const search::Candidate* SearchRun::best() const {
  const search::Candidate* best = nullptr;
  for (const auto& r : results)
    if (r.best() && (!best || r.best()->objective() < best->objective())) best = r.best();
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

using Algos = std::vector<std::string>;

// Every searcher over every order of the cluster's GPU types (strategies/search/gpu_orders.h),
// on the cluster's first `gpus` GPUs (0: all). A fresh cache per searcher so their times
// compare; one price per plan on the ranking engine, shared by the searchers.
std::vector<search::SearchResult> search_all(const search::Problem& problem, const Algos& algos,
                                             search::SearchOptions options, long rerank, bool bar, int gpus = 0,
                                             const search::GpuOrderProblems::CandidateCost& cost = {}) {
  const search::GpuOrderProblems orders(problem, gpus);
  std::vector<search::SearchResult> out;
  for (const std::string& name : algos) {
    const std::string label = gpus > 0 ? name + " " + std::to_string(gpus) : name;
    if (bar) options.progress = [&](const search::Progress& p) { draw_bar(label, p); };
    out.push_back(orders.search(*search::searchers().make(name), options, rerank, cost));
    if (bar) std::cerr << "\r" << std::string(70, ' ') << "\r" << std::flush;
  }
  return out;
}

// --objective cost: every searcher on each part of the cluster, its plans priced in GPU-hours
// of `steps` iterations (and dollars, with prices), merged per searcher over the parts; the
// best of each part kept.
std::vector<search::SearchResult> search_parts(const search::Problem& problem, const Algos& algos,
                                               search::SearchOptions options, long rerank, bool bar, long steps,
                                               const std::map<std::string, double>& prices,
                                               std::vector<PartBest>& parts) {
  const std::vector<int> sizes = search::cluster_part_sizes(*problem.cluster);
  if (options.budget_s > 0) options.budget_s /= static_cast<double>(sizes.size());
  std::vector<std::vector<search::SearchResult>> per_algo(algos.size());
  // A plan's GPU-hours on the GPUs of its problem's cluster (the part, in its GPU-type order),
  // and their dollars at each type's price.
  auto cost = [&](search::Candidate& c, const platforms::Cluster& part) {
    const double hours = c.score.cost() * static_cast<double>(steps) / 3600;
    c.gpu_hours = hours * part.gpu_count();
    if (prices.empty()) return;
    c.dollars = 0;
    for (const auto& g : part.gpus) c.dollars += hours * prices.at(g.spec->name);
  };
  for (int n : sizes) {
    PartBest part{n, {}};
    std::vector<search::SearchResult> found = search_all(problem, algos, options, rerank, bar, n, cost);
    for (size_t i = 0; i < found.size(); ++i) {
      for (const search::Candidate& c : found[i].top)
        if (part.best.gpu_hours == 0 || c.objective() < part.best.objective()) part.best = c;
      per_algo[i].push_back(std::move(found[i]));
    }
    parts.push_back(part);
  }
  std::vector<search::SearchResult> out;
  for (const auto& results : per_algo)
    out.push_back(search::merge_orders(results, options.top, std::to_string(results.size()) + " cluster sizes"));
  return out;
}

// Prices for every GPU type of the platform and none for another (a typo would go unread).
std::map<std::string, double> checked_prices(const std::map<std::string, double>& prices,
                                             const platforms::Cluster& cluster) {
  if (prices.empty()) return prices;
  const std::vector<std::string> types = platforms::gpu_types(cluster);
  for (const auto& [type, price] : prices)
    if (std::find(types.begin(), types.end(), type) == types.end())
      throw ConfigError(SourceLoc{"--price", 0, 0}, "", "platform " + cluster.name + " has no " + type + " GPU");
  for (const std::string& type : types)
    if (!prices.count(type))
      throw ConfigError(SourceLoc{"--price", 0, 0}, "",
                        "no price for " + type + "; give --price " + type + "=DOLLARS_PER_GPU_HOUR for every GPU type");
  return prices;
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
  search::Problem problem{&model, &cluster, a.global_batch > 0 ? a.global_batch : model.global_batch_size, a.grad_dtype,
                          a.recompute};
  if (problem.global_batch <= 0)
    throw ConfigError(
        SourceLoc{a.workload, 0, 0}, "global_batch_size",
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
    if (!(options.budget_s >= 1e-3 && options.budget_s <= 1e6))
      throw ConfigError(SourceLoc{"--budget", 0, 0}, "", "expected 1 ms to 1e6 s, e.g. 30s");
  }
  strategies::ConvergenceConfig accuracy;  // --objective time-to-accuracy: checked before searching
  accuracy.data = strategies::parse_data_spec(a.data);
  accuracy.target_loss = a.target_loss;
  accuracy.learning_rate = a.learning_rate;
  accuracy.eval_every = 1;  // steps to the target exactly: the rules differ by a few
  const bool bar = a.progress && isatty(STDERR_FILENO);
  SearchRun run;
  run.platform = cluster.name;
  run.workload = model.name;
  run.gpus = cluster.gpu_count();
  run.global_batch = problem.global_batch;
  run.objective = a.objective;
  // (The copies of model and cluster live in this frame; results hold plans only.)
  if (a.objective == "cost") {
    run.steps = a.steps;
    run.prices = checked_prices(a.prices, cluster);
    run.results = search_parts(problem, algos, options, a.rerank, bar, a.steps, run.prices, run.parts);
  } else {
    run.results = search_all(problem, algos, options, a.rerank, bar);
  }
  if (a.objective == "time-to-accuracy") strategies::rank_by_time_to_accuracy(problem, run.results, accuracy, a.top);
  if (!a.verify.empty()) {
    for (const auto& r : run.results) {
      run.verified.emplace_back();
      for (const auto& c : r.top) {
        VerifiedPlan v;
        v.engine = a.verify;
        try {
          v.iteration_time_s = strategies::simulate(strategies::model_for_plan(model, c.plan),
                                                    strategies::cluster_for_plan(cluster, c.plan), c.plan, a.verify)
                                   .report.iteration_time_s;
        } catch (const Error& e) {
          v.error = e.what();
        }
        run.verified.back().push_back(v);
      }
    }
  }
  return run;
}

std::string cost_cell(const search::Candidate& c) {
  char buf[96];
  if (c.dollars > 0)
    std::snprintf(buf, sizeof buf, "%.4g GPU-h, $%.2f", c.gpu_hours, c.dollars);
  else
    std::snprintf(buf, sizeof buf, "%.4g GPU-h", c.gpu_hours);
  return buf;
}

namespace {

// --objective cost: the best plan of each part of the cluster, the trade-off a user picks from.
void write_parts_table(std::ostream& out, const SearchRun& run) {
  char buf[512];
  out << "\n  by cluster part (" << (run.prices.empty() ? "GPU-hours" : "GPU-hours and dollars") << " of " << run.steps
      << " iterations)\n  GPUs    iteration    " << (run.prices.empty() ? "GPU-hours     " : "cost                  ")
      << " plan\n";
  const int width = run.prices.empty() ? 14 : 22;
  for (const PartBest& p : run.parts) {
    if (p.best.gpu_hours == 0)
      std::snprintf(buf, sizeof buf, "  %-7d %-12s %-*s %s\n", p.gpus, "-", width, "-", "none fits");
    else
      std::snprintf(buf, sizeof buf, "  %-7d %-12s %-*s %s\n", p.gpus,
                    units::format_time(p.best.score.iteration_time_s).c_str(), width, cost_cell(p.best).c_str(),
                    search::describe(p.best.plan).c_str());
    out << buf;
  }
}
}  // namespace

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
    if (!r.ranking.empty()) out << "  " << r.ranking << "\n";
    if (r.top.empty()) {
      out << "  no plan fits in memory\n";
      continue;
    }
    const bool verified = i < run.verified.size(), ranked = !r.ranked_on.empty();
    std::snprintf(buf, sizeof buf, "  %-3s %-58s %-11s %-11s%-13s %-11s %-5s%s\n", "#", "plan", "iteration",
                  ranked ? "alone" : "", "tokens/s", "peak mem", "fits",
                  verified ? (" " + run.verified[i].front().engine).c_str() : "");
    out << buf;
    for (size_t k = 0; k < r.top.size(); ++k) {
      const auto& c = r.top[k];
      std::string check;
      if (verified) {
        const VerifiedPlan& v = run.verified[i][k];
        check = v.error.empty() ? " " + units::format_time(v.iteration_time_s) : " failed: " + v.error;
      }
      if (c.gpu_hours > 0) check += "  " + cost_cell(c);
      if (c.to_accuracy_s > 0)
        check += std::isfinite(c.to_accuracy_s) ? "  to accuracy " + units::format_time(c.to_accuracy_s) + " (" +
                                                      std::to_string(c.steps) + " steps, " + c.rule + ")"
                                                : "  target not reached (" + c.rule + ")";
      std::snprintf(buf, sizeof buf, "  %-3zu %-58s %-11s %-11s%-13.4g %-11s %-5s%s\n", k + 1,
                    search::describe(c.plan).c_str(), units::format_time(c.score.iteration_time_s).c_str(),
                    ranked ? units::format_time(c.alone_s).c_str() : "", c.score.tokens_per_s,
                    units::format_bytes(c.score.peak_memory_bytes).c_str(), c.score.fits ? "yes" : "no", check.c_str());
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
                      100 * (r.best()->objective() / best->objective() - 1), units::format_time(r.wall_s).c_str(),
                      r.evaluations);
      }
      out << buf;
    }
  }
  if (run.objective == "cost") write_parts_table(out, run);
}

namespace {
// A plan's keys as load_plan reads them (write_plan_yaml's, as JSON): what it loads is the plan.
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
  if (p.account_for_embedding) j["account_for_embedding_in_pipeline_split"] = true;
  if (p.account_for_loss) j["account_for_loss_in_pipeline_split"] = true;
  if (p.token_slice_count > 0) j["token_slices"] = p.token_slice_count;
  if (!p.token_slices.empty()) j["token_slices"] = p.token_slices;
  if (p.zero == 3 && p.zero_prefetch != strategies::Plan{}.zero_prefetch) j["zero_prefetch"] = p.zero_prefetch;
  if (p.zero == 3 && p.zero_backward_prefetch != strategies::Plan{}.zero_backward_prefetch)
    j["zero_backward_prefetch"] = p.zero_backward_prefetch;
  if (p.zero == 3 && !p.zero_reshard_after_forward) j["zero_reshard_after_forward"] = false;
  if (p.dp_shard > 0) j["dp_shard"] = p.dp_shard;
  if (!p.stage_tp.empty()) j["stage_tp"] = p.stage_tp;
  if (!p.stage_recompute.empty()) j["recompute"] = p.stage_recompute;
  if (p.recompute_early_stop) j["recompute_early_stop"] = true;
  if (p.recompute_layers > 0) j["recompute_layers"] = p.recompute_layers;
  if (!p.grad_dtype.empty()) j["grad_dtype"] = p.grad_dtype;
  if (!p.optimizer_dtype.empty()) j["optimizer_dtype"] = p.optimizer_dtype;
  if (p.ep > 1) j["ep"] = p.ep;
  if (p.cp > 1) {
    j["cp"] = p.cp;
    j["cp_comm"] = p.cp_comm;
  }
  if (!p.offload_optimizer.empty()) j["offload"]["optimizer"] = p.offload_optimizer;
  if (!p.offload_parameters.empty()) j["offload"]["parameters"] = p.offload_parameters;
  if (!p.offload_activations.empty()) j["offload"]["activations"] = p.offload_activations;
  if (p.offload_activation_layers > 0) j["offload"]["layers"] = p.offload_activation_layers;
  if (!p.gpu_order.empty()) j["gpu_order"] = p.gpu_order;
  if (p.use_gpus > 0) j["gpus"] = p.use_gpus;
  if (!p.embedding_sharding.empty()) j["embedding_sharding"] = p.embedding_sharding;
  if (!p.replica_microbatches.empty()) j["replica_microbatches"] = p.replica_microbatches;
  const auto& d = p.data_parallel;
  if (d.sync != "all-reduce" || d.compression != "none" || d.delay > 0 || d.bucket_bytes > 0) {
    nlohmann::json& x = j["data_parallel"] = {{"sync", d.sync}};
    if (d.servers != 1) x["servers"] = d.servers;
    if (d.bucket_bytes > 0) x["bucket"] = std::to_string(static_cast<long long>(d.bucket_bytes)) + " B";
    if (d.sync == "gossip") x["peers"] = d.peers;
    if (d.compression != "none") x["compression"] = d.compression;
    if (d.compression == "topk") x["density"] = d.density;
    if (d.compression == "powersgd") x["rank"] = d.rank;
    if (d.delay > 0) x["delay"] = d.delay;
  }
  if (p.overlap_grad_reduce) j["overlap_grad_reduce"] = true;
  if (p.overlap_param_gather) j["overlap_param_gather"] = true;
  if (p.tp_comm_overlap) j["tp_comm_overlap"] = true;
  if (p.defer_embedding_wgrad_compute) {
    j["defer_embedding_wgrad_compute"] = true;
    j["wgrad_deferral_limit"] = p.wgrad_deferral_limit;
  }
  if (p.fp8_param_gather) j["fp8_param_gather"] = true;
  if (p.fp8_recipe != sim::Fp8Recipe::Default) j["fp8_recipe"] = sim::to_string(p.fp8_recipe);
  if (p.comm_sms != strategies::Plan::kAutoCommSms) j["comm_sms"] = p.comm_sms;
  return j;
}
}  // namespace

std::string plan_json_text(const strategies::Plan& plan) { return plan_json(plan).dump(); }

namespace {
nlohmann::json candidate_json(const search::Candidate& c) {
  nlohmann::json j = {{"plan", plan_json(c.plan)},
                      {"description", search::describe(c.plan)},
                      {"iteration_time_s", c.score.iteration_time_s},
                      {"tokens_per_s", c.score.tokens_per_s},
                      {"peak_memory_bytes", c.score.peak_memory_bytes},
                      {"capacity_bytes", c.score.capacity_bytes},
                      {"fits", c.score.fits}};
  if (c.alone_s > 0) j["alone_iteration_time_s"] = c.alone_s;
  if (c.gpu_hours > 0) j["gpu_hours"] = c.gpu_hours;
  if (c.dollars > 0) j["dollars"] = c.dollars;
  if (c.to_accuracy_s > 0) {  // infinity (not reached) as null
    j["time_to_accuracy_s"] = std::isfinite(c.to_accuracy_s) ? nlohmann::json(c.to_accuracy_s) : nlohmann::json();
    j["steps_to_accuracy"] = c.steps;
    j["update_rule"] = c.rule;
  }
  return j;
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
    nlohmann::json s = {
        {"algorithm", r.algorithm}, {"evaluations", r.evaluations},           {"simulations", r.simulations},
        {"wall_s", r.wall_s},       {"budget_exhausted", r.budget_exhausted}, {"note", r.note}};
    if (!r.ranked_on.empty()) {
      s["ranked_on"] = r.ranked_on;
      s["ranking"] = r.ranking;
    }
    s["top"] = nlohmann::json::array();
    for (size_t k = 0; k < r.top.size(); ++k) {
      nlohmann::json c = candidate_json(r.top[k]);
      if (i < run.verified.size()) {
        const VerifiedPlan& v = run.verified[i][k];
        c["verified"] = {{"engine", v.engine},
                         {"iteration_time_s", v.error.empty() ? nlohmann::json(v.iteration_time_s) : nlohmann::json()}};
        if (!v.error.empty()) c["verified"]["error"] = v.error;
      }
      s["top"].push_back(c);
    }
    s["best"] = r.best() ? candidate_json(*r.best()) : nlohmann::json();
    j["searches"].push_back(s);
  }
  j["best"] = run.best() ? candidate_json(*run.best()) : nlohmann::json();
  j["objective"] = run.objective;
  if (run.objective == "cost") {
    j["steps"] = run.steps;
    if (!run.prices.empty()) j["prices_per_gpu_hour"] = run.prices;
    j["parts"] = nlohmann::json::array();
    for (const PartBest& p : run.parts)
      j["parts"].push_back(
          {{"gpus", p.gpus}, {"best", p.best.gpu_hours > 0 ? candidate_json(p.best) : nlohmann::json()}});
  }
  out << json_text(j, 2) << "\n";
}

void write_search_html(std::ostream& out, const SearchRun& run) {
  auto esc = [](const std::string& s) {
    std::string o;
    for (char c : s) o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
    return o;
  };
  double worst = 0;
  for (const auto& r : run.results)
    for (const auto& c : r.top) worst = std::max(worst, c.score.iteration_time_s);
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dejavu search</title>\n<style>"
         "body{font-family:sans-serif;margin:24px}table{border-collapse:collapse}td,th{padding:3px "
         "10px;text-align:left;"
         "border-bottom:1px solid "
         "#ddd}.bar{background:#4e79a7;height:12px}.best{font-weight:bold}</style></head><body>\n";
  out << "<h1>Plan search: " << esc(run.workload) << " on " << esc(run.platform) << "</h1>\n<p>" << run.gpus
      << " GPUs, global batch " << run.global_batch << ".</p>\n";
  const search::Candidate* best = run.best();
  for (size_t i = 0; i < run.results.size(); ++i) {
    const auto& r = run.results[i];
    out << "<h2>" << esc(r.algorithm) << "</h2>\n<p>" << r.evaluations << " evaluations (" << r.simulations
        << " simulated) in " << esc(units::format_time(r.wall_s)) << "; " << esc(r.note) << "</p>\n";
    if (!r.ranking.empty()) out << "<p>" << esc(r.ranking) << "</p>\n";
    if (r.top.empty()) {
      out << "<p>No plan fits in memory.</p>\n";
      continue;
    }
    const bool cost = run.objective == "cost";
    out << "<table><tr><th>#</th><th>plan</th><th>iteration</th><th></th><th>tokens/s</th><th>peak memory</th>"
        << (cost ? "<th>" + std::string(run.prices.empty() ? "GPU-hours" : "GPU-hours, dollars") + " (" +
                       std::to_string(run.steps) + " iterations)</th>"
                 : "")
        << (i < run.verified.size() ? "<th>verified</th>" : "") << "</tr>\n";
    for (size_t k = 0; k < r.top.size(); ++k) {
      const auto& c = r.top[k];
      const bool is_best = best && search::plan_key(c.plan) == search::plan_key(best->plan);
      char bar[64];
      std::snprintf(bar, sizeof bar, "%.0f", worst > 0 ? 300 * c.score.iteration_time_s / worst : 0);
      out << "<tr" << (is_best ? " class=\"best\"" : "") << "><td>" << k + 1 << "</td><td>"
          << esc(search::describe(c.plan)) << "</td><td>" << esc(units::format_time(c.score.iteration_time_s))
          << "</td><td><div class=\"bar\" style=\"width:" << bar << "px\"></div></td><td>"
          << static_cast<long long>(c.score.tokens_per_s) << "</td><td>"
          << esc(units::format_bytes(c.score.peak_memory_bytes)) << "</td>";
      if (cost) out << "<td>" << esc(cost_cell(c)) << "</td>";
      if (i < run.verified.size()) {
        const auto& v = run.verified[i][k];
        out << "<td>" << esc(v.error.empty() ? v.engine + " " + units::format_time(v.iteration_time_s) : v.error)
            << "</td>";
      }
      out << "</tr>\n";
    }
    out << "</table>\n";
  }
  out << "<script>document.body.setAttribute('data-rendered','yes');</script>\n</body></html>\n";
}

}  // namespace dejavu::tools
