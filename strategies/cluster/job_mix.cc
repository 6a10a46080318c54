#include "strategies/cluster/job_mix.h"

#include <filesystem>

#include "sim/config_node.h"
#include "sim/limits.h"
#include "strategies/recompute_modes.h"

namespace dejavu::strategies::cluster {

const MixRule* JobMix::rule_for(int gpus) const {
  for (const MixRule& r : rules)
    if (r.holds(gpus)) return &r;
  return nullptr;
}

namespace {

MixRule load_rule(const ConfigNode& n, const std::string& dir) {
  n.expect_map({"gpus", "multiple_of", "workload", "tp", "pp", "micro_batch", "microbatches", "zero", "recompute",
                "sequence_parallel"});
  MixRule r;
  const std::vector<ConfigNode> range = n.child("gpus").items();
  if (range.size() != 2) n.child("gpus").fail("expected [least, most] GPUs");
  r.min_gpus = static_cast<int>(range[0].as_int(1, limits::kMaxGpus));
  r.max_gpus = static_cast<int>(range[1].as_int(r.min_gpus, limits::kMaxGpus));
  r.multiple_of = static_cast<int>(n.get_int("multiple_of", 1, 1, limits::kMaxGpus));
  const ConfigNode w = n.child("workload");
  const std::filesystem::path p = std::filesystem::path(dir) / w.as_string();
  if (!std::filesystem::exists(p)) w.fail("no such file: " + p.string());
  r.workload = p.lexically_normal().string();
  r.tp = static_cast<int>(n.get_int("tp", 1, 1, limits::kMaxDegree));
  r.pp = static_cast<int>(n.get_int("pp", 1, 1, limits::kMaxDegree));
  r.micro_batch = static_cast<int>(n.get_int("micro_batch", 1, 1, limits::kMaxBatch));
  r.microbatches = static_cast<int>(n.get_int("microbatches", 1, 1, limits::kMaxMicrobatches));
  r.zero = static_cast<int>(n.get_int("zero", 0, 0, 3));
  if (n.has("recompute")) r.recompute = n.child("recompute").as_choice(recompute_mode_names());
  r.sequence_parallel = n.get_bool("sequence_parallel", false);
  return r;
}

}  // namespace

JobMix load_job_mix_file(const std::string& path) {
  const ConfigNode root = ConfigNode::load_file(path);
  root.expect_map({"rules"});
  JobMix mix;
  mix.file = path;
  const std::string dir = std::filesystem::path(path).parent_path().string();
  for (const ConfigNode& n : root.child("rules").items()) mix.rules.push_back(load_rule(n, dir));
  if (mix.rules.empty()) root.child("rules").fail("no rules; list at least one");
  return mix;
}

}  // namespace dejavu::strategies::cluster
