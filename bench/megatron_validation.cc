// Predicted against measured iteration times for the four GPT models of Korthikanti et al.
// 2022 (A100 80GB DGX servers), under full recomputation and under sequence parallelism with
// selective recomputation. Nothing here is fitted to these numbers.
//   build/bench/megatron_validation [measurements.csv] [server-preset.yaml]
#include <cmath>
#include <cstdio>
#include <iostream>

#include "bench/bench_common.h"
#include "sim/error.h"
#include "tools/megatron_validation.h"

int main(int argc, char** argv) {
  using namespace dejavu;
  bench::register_all();
  const std::string csv = argc > 1 ? argv[1] : bench::src("strategies/validation/megatron_seqpar_selective_a100.csv");
  const std::string platform = argc > 2 ? argv[2] : bench::src("platforms/presets/dgx-a100-1x8.yaml");
  try {
    std::printf("# Megatron-LM on A100 (Korthikanti et al. 2022, Table 5): iteration time in seconds\n");
    std::printf(
        "# model  GPUs  tp pp v | full recompute: measured predicted error | seq-par + selective: measured predicted "
        "error | MFU measured predicted | peak memory\n");
    double sum_abs = 0;
    int n = 0;
    for (const auto& row : tools::load_megatron_csv(csv)) {
      const tools::MegatronPrediction p = tools::predict(row, platform);
      const double e1 = p.full_recompute_s / row.full_recompute_s - 1,
                   e2 = p.seqpar_selective_s / row.seqpar_selective_s - 1;
      sum_abs += std::fabs(e1) + std::fabs(e2);
      n += 2;
      std::printf("%-6s %5d %3d %2d %d | %7.2f %7.2f %+6.1f%% | %7.2f %7.2f %+6.1f%% | %.3f %.3f | %.1f GB%s\n",
                  row.model.c_str(), row.gpus, row.tp, row.pp, row.interleave, row.full_recompute_s, p.full_recompute_s,
                  100 * e1, row.seqpar_selective_s, p.seqpar_selective_s, 100 * e2, row.mfu_seqpar_selective,
                  p.mfu_seqpar_selective, p.peak_memory_bytes / 1e9, p.oom ? " OOM" : "");
    }
    std::printf("# mean |error| over %d predictions: %.1f%%\n", n, 100 * sum_abs / n);
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  return 0;
}
