// The built-in collective algorithms, one file each; registered by
// register_collective_algorithms() in sim/collective.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/collective.h"

namespace dejavu::sim {

std::unique_ptr<CollectiveAlgorithm> make_ring();
std::unique_ptr<CollectiveAlgorithm> make_double_binary_tree();
std::unique_ptr<CollectiveAlgorithm> make_halving_doubling();
std::unique_ptr<CollectiveAlgorithm> make_direct();
std::unique_ptr<CollectiveAlgorithm> make_hierarchical();
std::unique_ptr<CollectiveAlgorithm> make_nvls();
std::unique_ptr<CollectiveAlgorithm> make_auto();

// Chunks a pipelined algorithm cuts `bytes` into: one per 4 MiB, at least 1, at most 64.
int pipeline_chunks(double bytes);

[[noreturn]] void unsupported(const std::string& algorithm, CollectiveOp op, size_t n, const std::string& why);

}  // namespace dejavu::sim
