// Predicted against measured iteration times of GPT models trained with Megatron-LM on A100
// servers (Korthikanti et al. 2022, Table 5; the CSV in strategies/validation/), under
// full recomputation and under sequence parallelism with selective recomputation.
#pragma once

#include <string>
#include <vector>

namespace dejavu::tools {

struct MegatronRow {
  std::string model;
  int heads = 0, hidden = 0, layers = 0, seq_len = 0, vocab = 0;
  int tp = 1, pp = 1, gpus = 1, global_batch = 1, micro_batch = 1, interleave = 1;
  double full_recompute_s = 0, seqpar_selective_s = 0, mfu_seqpar_selective = 0;
  std::string file;  // where the row was read, for errors about it
  int line = 0;
};

struct MegatronPrediction {
  MegatronRow row;
  double full_recompute_s = 0, seqpar_selective_s = 0;
  double mfu_seqpar_selective = 0;
  double peak_memory_bytes = 0;  // sequence parallel + selective, fullest GPU
  bool oom = false;
  std::string gpu;    // the platform's GPU type
  double params = 0;  // the model's parameters
};

std::vector<MegatronRow> load_megatron_csv(const std::string& path);
// `platform`: an 8-GPU server preset; the cluster gets gpus/8 of them.
MegatronPrediction predict(const MegatronRow& row, const std::string& platform,
                           const std::vector<std::string>& calibrations = {});

}  // namespace dejavu::tools
