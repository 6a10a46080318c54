#include "tools/megatron_validation.h"

#include <fstream>
#include <sstream>

#include "sim/error.h"
#include "tools/platform_input.h"
#include "strategies/simulate.h"
#include "workloads/transformer.h"

namespace dejavu::tools {

std::vector<MegatronRow> load_megatron_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(SourceLoc{path, 0, 0}, "", "cannot open the file");
  std::vector<MegatronRow> rows;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    if (++line_no == 1 || line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) f.push_back(cell);
    if (f.size() != 15)
      throw ConfigError(SourceLoc{path, line_no, 1}, "",
                        "expected 15 columns: model,heads,hidden,layers,seq_len,vocab,tp,pp,gpus,global_batch,"
                        "micro_batch,interleave,full_recompute_s,seqpar_selective_s,mfu_seqpar_selective");
    try {
      MegatronRow r;
      r.model = f[0];
      r.heads = std::stoi(f[1]);
      r.hidden = std::stoi(f[2]);
      r.layers = std::stoi(f[3]);
      r.seq_len = std::stoi(f[4]);
      r.vocab = std::stoi(f[5]);
      r.tp = std::stoi(f[6]);
      r.pp = std::stoi(f[7]);
      r.gpus = std::stoi(f[8]);
      r.global_batch = std::stoi(f[9]);
      r.micro_batch = std::stoi(f[10]);
      r.interleave = std::stoi(f[11]);
      r.full_recompute_s = std::stod(f[12]);
      r.seqpar_selective_s = std::stod(f[13]);
      r.mfu_seqpar_selective = std::stod(f[14]);
      rows.push_back(r);
    } catch (const std::exception&) {
      throw ConfigError(SourceLoc{path, line_no, 1}, "", "a column is not a number");
    }
  }
  return rows;
}

MegatronPrediction predict(const MegatronRow& row, const std::string& platform,
                           const std::vector<std::string>& calibrations) {
  platforms::Cluster cluster = load_platform(platform, calibrations);
  if (cluster.groups.size() != 1 || row.gpus % cluster.groups[0].gpus_per_server != 0)
    throw Error("validation platform " + platform + " must be one group of servers dividing " + std::to_string(row.gpus) + " GPUs");
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
  return out;
}

}  // namespace dejavu::tools
