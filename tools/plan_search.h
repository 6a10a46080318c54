// `dejavu search`: run one searcher (or all of them) on a problem, print the best plans,
// optionally re-check them on the SimGrid engine, write JSON and the winning plan's YAML.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "strategies/search/rerank.h"
#include "strategies/search/searcher.h"
#include "workloads/model_graph.h"

namespace dejavu::tools {

struct SearchArgs {
  std::string platform, workload;
  std::vector<std::string> calibrations;  // --calibration files
  std::string algo = "grid";              // a searcher's name, or "all"
  std::string budget;                     // "30 s"; empty: none
  unsigned long long seed = 1;
  int top = 5;
  long iterations = 0;
  int global_batch = 0;                // 0: the workload's global_batch_size
  std::string grad_dtype;              // every plan's grad_dtype ("": the model's dtype)
  std::vector<std::string> recompute;  // the recomputation modes tried (empty: none, selective, full)
  std::string verify;                  // "simgrid": re-simulate the top plans on it
  // Rank the top plans on the default engine (links shared), pricing at most this many of
  // each searcher's best plans there (strategies/search/rerank.h); 0: rank on the search's
  // own engine, without link sharing.
  long rerank = strategies::search::kDefaultRerank;
  std::string json, output;  // files to write
  std::string report;        // HTML
  bool progress = true;      // a bar on stderr when it is a terminal
  // What the plans are ranked by: "time" (the iteration) or "time-to-accuracy" (each
  // searcher's top plans and their update-rule variants trained to target_loss on `data`
  // by the convergence model, strategies/training/time_to_accuracy.h).
  // "cost": every searcher also on parts of the cluster (strategies/search/cluster_parts.h),
  // plans ranked by the GPU-hours of `steps` iterations on the GPUs each uses.
  std::string objective = "time";
  long steps = 1000;
  // --objective cost with prices: dollars per GPU-hour by GPU type (every type of the
  // platform); plans ranked by dollars instead of GPU-hours.
  std::map<std::string, double> prices;
  double target_loss = 0.6;
  double learning_rate = 0.5;
  std::string data = "synthetic:classes=10,dim=64";
};

struct VerifiedPlan {
  std::string engine;
  double iteration_time_s = 0;
  std::string error;
};

// Under --objective cost: the best plan found on one part of the cluster.
struct PartBest {
  int gpus = 0;
  strategies::search::Candidate best;  // gpu_hours 0: no plan fits on this part
};

struct SearchRun {
  std::string platform, workload;
  int gpus = 0, global_batch = 0;
  std::string objective = "time";
  long steps = 0;                                         // --objective cost: the iterations GPU-hours count
  std::map<std::string, double> prices;                   // --objective cost: dollars per GPU-hour by type
  std::vector<PartBest> parts;                            // --objective cost: by GPU count, descending
  std::vector<strategies::search::SearchResult> results;  // one per searcher
  std::vector<std::vector<VerifiedPlan>> verified;        // [result][top plan], with --verify
  // The best plan over every searcher, if any fits.
  const strategies::search::Candidate* best() const;
};

// Throws ConfigError for bad arguments (unknown searcher, no global batch, ...).
SearchRun run_search(const SearchArgs& args);

// "12.3 GPU-h" or, with prices, "12.3 GPU-h, $24.60": a plan's cost under --objective cost.
std::string cost_cell(const strategies::search::Candidate& c);

// A plan as JSON with load_plan's keys (`search --json`'s "plan", Python's search): loaded
// back, it is the same plan.
std::string plan_json_text(const strategies::Plan& plan);

void write_search_table(std::ostream& out, const SearchRun& run);
void write_search_json(std::ostream& out, const SearchRun& run);
// A self-contained HTML page: every searcher's top plans, their times as bars, the summary.
void write_search_html(std::ostream& out, const SearchRun& run);

}  // namespace dejavu::tools
