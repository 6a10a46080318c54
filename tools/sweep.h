// Design-space sweeps: one base platform, workload and plan, axes over any of their fields,
// every point simulated in its own process, results kept point by point so a killed sweep
// resumes where it stopped.
//
//   name: gpu-vs-network
//   platform: ../../../platforms/presets/dgx-a100-4x8.yaml   # paths relative to this file
//   workload: ../../../workloads/presets/gpt3-13b.yaml
//   plan: ../tp4-pp2-dp4-1f1b.yaml      # or `search: grid` (with global_batch) for the best
//   engine: analytic                    # per point; simgrid works too
//   timeout: 120 s                      # a point still running then is recorded as failed
//   axes:                               # the Cartesian product, in this order
//     platform.servers[0].gpu: [A100-SXM-80GB, H100-SXM-80GB]
//     platform.servers[0].nic.bandwidth: [100 Gbps, 200 Gbps, 400 Gbps]
//     plan.pp: {from: 1, to: 4, factor: 2}          # ranges: from/to with step or factor
//
// When an axis changes the GPU count or tp/pp, the plan's dp is refitted to the cluster
// (tp x pp x dp x cp = GPUs) if it divides; otherwise the point fails with the plan's error.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace dejavu::tools {

struct SweepAxis {
  std::string path;                 // "platform.servers[0].nic.bandwidth"
  std::vector<std::string> values;  // as written (units and all)
};

struct SweepSpec {
  std::string file, name;
  std::string platform, workload, plan;  // resolved paths
  std::string search;                    // "" or a searcher's name
  int global_batch = 0;
  std::string engine = "analytic";
  double timeout_s = 0;
  std::vector<SweepAxis> axes;
  size_t points() const;
};

struct SweepPoint {
  size_t index = 0;
  std::vector<std::string> values;  // one per axis
  std::string key() const;          // "A100-SXM-80GB|200 Gbps|2": what resume matches
};

// Throws ConfigError naming the file and place for a malformed sweep (unknown key, an axis
// whose path is not in the base YAML, an empty axis, a missing file).
SweepSpec load_sweep(const std::string& path);
SweepPoint point_at(const SweepSpec& spec, size_t index);

// Which points shard i of n takes: index mod n == i. "3/64" parses into {3, 64}.
std::pair<int, int> parse_shard(const std::string& text);

// One point, in this process: its result as one JSON line (status ok or failed).
std::string run_point(const SweepSpec& spec, const SweepPoint& point);

struct SweepRunOptions {
  int jobs = 1;
  int shard = 0, shards = 1;
  std::string out_dir;
  bool progress = true;
};

struct SweepSummary {
  size_t total = 0, skipped = 0, done = 0, failed = 0;
};

// Runs the points of the shard not already in out_dir, `jobs` at a time, each in a forked
// child (killed at the timeout); each result lands in out_dir/points/<key hash>.json,
// written atomically.
SweepSummary run_sweep_points(const SweepSpec& spec, const SweepRunOptions& options);

// Every point file of a results folder, as one CSV (sorted by point index), and a plot:
// a heatmap of iteration time over two axes, or a line over one.
struct MergedTable {
  std::vector<std::string> axes;
  std::vector<std::vector<std::string>> rows;  // axis values, status, numbers, error
};
MergedTable merge_results(const std::string& out_dir);
void write_merged_csv(std::ostream& out, const MergedTable& t);
void write_merged_svg(std::ostream& out, const MergedTable& t);  // throws Error for > 2 axes

}  // namespace dejavu::tools
