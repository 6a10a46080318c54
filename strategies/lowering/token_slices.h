// TeraPipe's token slices as the lowering uses them: each slice's length, and the model and
// stage work as that slice sees them (workloads/token_slice.h). Lengths come from the plan
// (a list, or k as even as possible), or from TeraPipe's dynamic program (Li et al. 2021,
// Alg. 1): the sequence cut at n = min(s, 32) even unit boundaries, each candidate slice
// [a, b) priced as one forward and backward on the pipeline's heaviest stage, t(a, b), and
// the cut minimising  m · Σ t_i + (p − 1) · max t_i  (m microbatches, p stages: the
// proportionate flow shop the schedule is) found by fixing the largest slice time allowed,
// each candidate in turn, and minimising Σ t_i under it.
#pragma once

#include <functional>
#include <vector>

#include "platforms/cluster.h"
#include "strategies/plan.h"
#include "strategies/stage_work.h"
#include "workloads/model_graph.h"

namespace dejavu::strategies::lowering {

struct TokenSlices {
  std::vector<int> lengths;                   // tokens; empty: the schedule does not slice
  bool chosen = false;                        // by the dynamic program
  std::vector<workloads::ModelGraph> models;  // per slice
  std::vector<std::vector<StageWork>> work;   // per slice, per virtual stage
  int count() const { return static_cast<int>(lengths.size()); }
};

// The slices of a plan whose schedule slices tokens (else none); `collective_algorithm` prices
// the tensor-parallel synchronisations the dynamic program weighs.
TokenSlices token_slices(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                         const std::string& collective_algorithm);

// The dynamic program on n units: `time(a, b)` for the slice of units [a, b); returns the
// cut as unit boundaries 0 = c_0 < c_1 < ... < c_k = n.
std::vector<int> best_cut(int n, const std::function<double(int, int)>& time, int microbatches, int stages);

// m · Σ t_i + (p − 1) · max t_i of a cut (what best_cut minimises).
double cut_objective(const std::vector<int>& cut, const std::function<double(int, int)>& time, int microbatches,
                     int stages);

}  // namespace dejavu::strategies::lowering
