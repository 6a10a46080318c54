#include "tools/megatron_validation.h"

#include "sim/csv.h"
#include "sim/error.h"
#include "sim/limits.h"
#include "tools/platform_input.h"
#include "strategies/simulate.h"
#include "workloads/transformer.h"

namespace dejavu::tools {

std::vector<MegatronRow> load_megatron_csv(const std::string& path) {
  const CsvTable table = CsvTable::load_file(path);
  table.expect_columns({"model", "heads", "hidden", "layers", "seq_len", "vocab", "tp", "pp", "gpus", "global_batch",
                        "micro_batch", "interleave", "full_recompute_s", "seqpar_selective_s", "mfu_seqpar_selective"});
  std::vector<MegatronRow> rows;
  for (const CsvRow& c : table.rows()) {
    MegatronRow r;
    r.model = c.text("model");
    r.heads = static_cast<int>(c.as_int("heads", 1, limits::kMaxHeads));
    r.hidden = static_cast<int>(c.as_int("hidden", 1, limits::kMaxWidth));
    r.layers = static_cast<int>(c.as_int("layers", 1, limits::kMaxLayers));
    r.seq_len = static_cast<int>(c.as_int("seq_len", 1, limits::kMaxSequence));
    r.vocab = static_cast<int>(c.as_int("vocab", 1, 1 << 30));
    r.tp = static_cast<int>(c.as_int("tp", 1, r.heads));
    r.pp = static_cast<int>(c.as_int("pp", 1, r.layers));
    r.gpus = static_cast<int>(c.as_int("gpus", 1, limits::kMaxGpus));
    r.global_batch = static_cast<int>(c.as_int("global_batch", 1, limits::kMaxBatch));
    r.micro_batch = static_cast<int>(c.as_int("micro_batch", 1, r.global_batch));
    r.interleave = static_cast<int>(c.as_int("interleave", 1, r.layers / r.pp));
    r.full_recompute_s = c.as_double("full_recompute_s", 1e-9, limits::kMaxTime);
    r.seqpar_selective_s = c.as_double("seqpar_selective_s", 1e-9, limits::kMaxTime);
    r.mfu_seqpar_selective = c.as_double("mfu_seqpar_selective", 0, 1);
    if (r.hidden % r.heads != 0)
      c.fail("heads", std::to_string(r.heads) + " does not divide hidden " + std::to_string(r.hidden));
    if (r.heads % r.tp != 0)
      c.fail("tp", std::to_string(r.tp) + " does not divide the " + std::to_string(r.heads) + " heads");
    if (r.gpus % (r.tp * r.pp) != 0) c.fail("gpus", std::to_string(r.gpus) + " is not a multiple of tp x pp");
    r.line = c.line();
    r.file = path;
    rows.push_back(r);
  }
  if (rows.empty()) throw ConfigError(SourceLoc{path, table.header_line(), 1}, "", "no rows after the header");
  return rows;
}

namespace {
MegatronPrediction predict_row(const MegatronRow& row, const std::string& platform,
                               const std::vector<std::string>& calibrations);
}

MegatronPrediction predict(const MegatronRow& row, const std::string& platform,
                           const std::vector<std::string>& calibrations) {
  // What the row asks that cannot be simulated is an error about the row.
  try {
    return predict_row(row, platform, calibrations);
  } catch (const ConfigError& e) {
    if (!e.where().file.empty() || row.file.empty()) throw;
    throw ConfigError(SourceLoc{row.file, row.line, 1}, e.key(), e.problem());
  } catch (const ModelError& e) {
    if (row.file.empty()) throw;
    throw ConfigError(SourceLoc{row.file, row.line, 1}, "", e.what());
  }
}

namespace {
MegatronPrediction predict_row(const MegatronRow& row, const std::string& platform,
                               const std::vector<std::string>& calibrations) {
  platforms::Cluster cluster = load_platform(platform, calibrations);
  if (cluster.groups.size() != 1 || row.gpus % cluster.groups[0].gpus_per_server != 0)
    throw ConfigError(SourceLoc{}, "gpus",
                      "validation platform " + platform + " must be one group of servers dividing " +
                          std::to_string(row.gpus) + " GPUs");
  cluster.groups[0].count = row.gpus / cluster.groups[0].gpus_per_server;
  cluster.network = sim::Network();
  platforms::build_network(cluster);
  const workloads::ModelGraph model = workloads::make_transformer(
      {row.model, row.layers, row.hidden, row.heads, row.seq_len, row.vocab, 0, sim::DType::FP16});
  strategies::Plan plan;
  plan.name = row.model;
  plan.tp = row.tp;
  plan.pp = row.pp;
  plan.dp = row.gpus / (row.tp * row.pp);
  plan.micro_batch_size = row.micro_batch;
  plan.global_batch_size = row.global_batch;
  plan.virtual_stages = row.interleave;
  plan.schedule = row.interleave > 1 ? "interleaved-1f1b" : "1f1b";
  MegatronPrediction out;
  out.row = row;
  plan.recompute = "full";
  out.full_recompute_s = strategies::simulate(model, cluster, plan).report.iteration_time_s;
  plan.recompute = "selective";
  plan.sequence_parallel = true;
  const strategies::Simulation s = strategies::simulate(model, cluster, plan);
  out.seqpar_selective_s = s.report.iteration_time_s;
  out.mfu_seqpar_selective = s.report.mfu;
  out.peak_memory_bytes = s.report.peak_memory_bytes;
  out.oom = s.report.oom;
  out.gpu = cluster.gpus.at(0).spec->name;
  out.params = model.parameter_count();
  return out;
}
}  // namespace

}  // namespace dejavu::tools
