// A nccl-tests-style sweep: one collective over the first n GPUs of a cluster, message
// size doubling from min to max, with time, algorithm bandwidth (size / time) and bus
// bandwidth (algbw x nccl-tests' factor, 2(n-1)/n for all-reduce). Optionally joined with
// measured bus bandwidths (the CSV in platforms/validation/) and the error per row.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "sim/engine.h"
#include "sim/task_graph.h"

namespace dejavu::tools {

struct SweepOptions {
  sim::CollectiveOp op = sim::CollectiveOp::AllReduce;
  int gpus = 8;
  double min_bytes = 1 << 20;
  double max_bytes = 1ULL << 33;
  double factor = 2;
  std::string algorithm = "ring";
  std::string engine = "analytic";
  sim::EngineOptions engine_options;
};

struct SweepRow {
  double bytes = 0;
  double time_s = 0;
  double algbw_Bps = 0;
  double busbw_Bps = 0;
  std::string algorithm;  // what ran (auto says what it picked)
  std::optional<double> measured_busbw_Bps;
  double error() const { return measured_busbw_Bps ? busbw_Bps / *measured_busbw_Bps - 1 : 0; }
};

std::vector<SweepRow> run_sweep(const platforms::Cluster& cluster, const SweepOptions& options);

// Rows of a measured bus-bandwidth CSV (gpu,gpus,servers,interconnect,message_bytes,
// busbw_GBps,source) for this GPU type and count join the sweep rows of the same size;
// message_bytes "large" joins the largest size of the sweep if it is at least 1 GiB.
// Returns how many rows joined. A malformed file is a ConfigError naming the line.
int attach_measurements(const std::string& csv_path, const std::string& gpu_type, int gpus,
                        std::vector<SweepRow>& rows);

// nccl-tests sizes: "1M", "8G" (binary multiples), or a size with a unit ("64 MiB"), from
// 1 B to 1 PB; a ConfigError naming `option` otherwise.
double parse_message_size(const std::string& option, const std::string& text);

void write_sweep_table(std::ostream& out, const std::vector<SweepRow>& rows);
void write_sweep_csv(std::ostream& out, const std::vector<SweepRow>& rows);

}  // namespace dejavu::tools
