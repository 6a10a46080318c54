// What `dejavu shard` prints and writes: the ILP's assignment of one layer, operator by
// operator, the re-layouts between them, and the reference plans (Megatron's tensor
// parallelism, with sequence parallelism, data parallelism) priced on the same graph.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "strategies/intra_op/ilp.h"

namespace dejavu::tools {

struct ShardingRun {
  std::string model, platform, gpus;  // gpus: "8 x A100 SXM4 80GB"
  int micro_batch = 1;
  double tokens = 0;  // per micro-batch
  strategies::intra_op::ShardingGraph graph;
  strategies::intra_op::Solution ilp;
  strategies::intra_op::IlpStats stats;
  double memory_budget_bytes = 0;                             // infinity: none
  std::optional<strategies::intra_op::Solution> brute_force;  // with --check
  double assignments = 0;                                     // what brute force tries
};

// One line: which reference plan the ILP found, or how far below Megatron's it is.
std::string sharding_verdict(const ShardingRun& run);
void write_sharding_table(std::ostream& o, const ShardingRun& run);
void write_sharding_json(std::ostream& o, const ShardingRun& run);

}  // namespace dejavu::tools
