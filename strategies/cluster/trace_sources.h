// Where job traces come from when a user has none of their own in dejavu's format
// (strategies/cluster/trace.h): a synthetic generator with documented distributions, and a
// converter from SenseTime's Helios logs (the cluster_log.csv schema of
// github.com/S-Lab-System-Group/HeliosData). Both give GPU counts and lengths; a job mix
// (job_mix.h) says what each job trains.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "strategies/cluster/job_mix.h"

namespace dejavu::strategies::cluster {

struct TraceRow {
  std::string name;
  double submit_s = 0;
  int gpus = 1;
  double hours = 0;  // its length with the cluster to itself
};

// The generator's distributions (ours, shaped as published cluster studies describe:
// most jobs on a few GPUs, most GPU time in the large ones, heavy-tailed lengths):
//   GPUs        1: 45%, 2: 8%, 4: 12%, 8: 20%, 16: 7%, 32: 4%, 64: 2.5%, 128: 1%, 256: 0.5%
//               (sizes above the cluster's drawn again)
//   length      log-normal hours, median 0.75 h, sigma 1.6, each kept in [2 min, 7 days],
//               all scaled (before that clamp) so the jobs' GPU-hours are `load` x the
//               cluster's over `days` (exactly, unless the clamps make it impossible)
//   arrivals    a Poisson process: `jobs` over `days` on average
struct SyntheticSpec {
  int jobs = 1000;
  double days = 7;
  int cluster_gpus = 1024;
  double load = 0.8;
  uint64_t seed = 1;
};
std::vector<TraceRow> synthetic_trace(const SyntheticSpec& spec);

// Helios' cluster_log.csv (job_id, gpu_num, submit_time "YYYY-MM-DD HH:MM:SS", duration
// seconds; other columns ignored): GPU jobs (gpu_num >= 1, duration > 0) of at most
// `max_gpus`, submitted within `days` of the first one kept, the first `max_jobs` of them;
// submit times from that first one. Throws ConfigError at a malformed cell.
struct HeliosSpec {
  int max_gpus = 1 << 20;
  double days = 1e9;
  int max_jobs = 1 << 30;
};
std::vector<TraceRow> helios_trace(const std::string& path, const HeliosSpec& spec);

// dejavu's trace CSV: each row's training from the mix, workload paths relative to
// `out_dir` (where the CSV goes). Throws ConfigError when no rule holds a job.
void write_trace_csv(std::ostream& out, const std::vector<TraceRow>& rows, const JobMix& mix,
                     const std::string& out_dir);

}  // namespace dejavu::strategies::cluster
