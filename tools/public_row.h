// A row of strategies/validation/public/training.csv as dejavu runs it: the model its
// source trained, on that source's servers with the suite's calibration of its GPU type,
// under the plan its configuration states. Shared by the suites (public_training.cc) and
// the export of one row as simulate's input files (public_row_export.cc).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "platforms/cluster.h"
#include "sim/config_node.h"
#include "sim/csv.h"
#include "strategies/plan.h"
#include "strategies/simulate.h"
#include "tools/public_training.h"
#include "workloads/llama.h"
#include "workloads/model_graph.h"
#include "workloads/transformer.h"

namespace dejavu::tools::public_rows {

// The table with every column a row is read from (a ConfigError naming those missing).
CsvTable load_training_table(const std::string& csv);

// Whether a row is one of the suite of `source` in `precision` (PublicOptions::precision).
bool in_suite(const CsvRow& r, const std::string& source, const std::string& precision);

// The error for --row `row` that no row of the suite has.
ConfigError no_such_row(const std::string& row, const std::string& source, const CsvTable& table,
                        const std::string& precision);

// Why a row cannot be simulated as its source ran it (nothing: it can).
std::optional<std::string> unsupported(const CsvRow& r);

// A calibration file of the suite, the GPU type it applies to, and whether a row had it.
struct CalibrationFile {
  ConfigNode file;
  std::string gpu;  // a GPU type, or platforms::kAnyGpu (a step calibration of every GPU type)
  bool used = false;
  bool applies_to(const std::string& gpu_type) const;
};
using Calibrations = std::vector<CalibrationFile>;
Calibrations load_calibrations(const std::vector<std::string>& paths);

// The row's model as its generator's config.
using ModelConfig = std::variant<workloads::TransformerConfig, workloads::LlamaConfig>;

// A row's model, cluster and plan (unstated recomputation settled: none if the run fits
// without it, else selective, Megatron's and NeMo's recommended default since Korthikanti et
// al. 2022, else full), and the simulation of them.
struct ResolvedRow {
  ModelConfig config;
  workloads::ModelGraph model;
  platforms::Cluster cluster;
  strategies::Plan plan;
  strategies::Simulation simulation;
  std::string preset;  // the server preset's path the cluster was made from
};
// `platforms`: the folder of the server presets. Throws Error when dejavu refuses the plan.
ResolvedRow resolve_row(const CsvRow& r, const std::string& platforms, const Calibrations& calibrations,
                        const PublicOptions& o);
// What validate reports of a resolved row: its label, set, measured and predicted step, and shape.
PublicRun run_of(const CsvRow& r, const ResolvedRow& row);

// " overlap=grad,param,tp,wgrad22" as the plan has them, for a row's label.
std::string overlaps_of(const strategies::Plan& p);

}  // namespace dejavu::tools::public_rows
