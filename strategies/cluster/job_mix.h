// What a job trains when a trace gives only its GPU count (the synthetic generator,
// SenseTime's Helios logs): the first rule whose GPU range (and multiple) holds it.
//
//   rules:
//     - {gpus: [1, 8], workload: ../../../workloads/presets/gpt3-1.3b.yaml, micro_batch: 4, microbatches: 4}
//     - {gpus: [16, 1048576], multiple_of: 8, workload: ../../../workloads/presets/gpt3-13b.yaml,
//        tp: 8, micro_batch: 1, microbatches: 8, recompute: selective, sequence_parallel: true}
//
// dp is gpus / (tp * pp); the global batch dp x micro_batch x microbatches.
#pragma once

#include <string>
#include <vector>

namespace dejavu::strategies::cluster {

struct MixRule {
  int min_gpus = 1, max_gpus = 1 << 20, multiple_of = 1;
  std::string workload;  // a path, as the mix file names it resolved against its folder
  int tp = 1, pp = 1, micro_batch = 1, microbatches = 1, zero = 0;
  std::string recompute = "none";
  bool sequence_parallel = false;
  bool holds(int gpus) const {
    return gpus >= min_gpus && gpus <= max_gpus && gpus % multiple_of == 0 && gpus % (tp * pp) == 0;
  }
};

struct JobMix {
  std::string file;
  std::vector<MixRule> rules;
  // The rule for a job of `gpus` GPUs; nullptr if none holds it.
  const MixRule* rule_for(int gpus) const;
};

// Throws ConfigError at the place in the file.
JobMix load_job_mix_file(const std::string& path);

}  // namespace dejavu::strategies::cluster
