// The intra-op assignment solved exactly as Alpa's integer linear program (Zheng et al.,
// OSDI 2022, section 4.2), with GLPK's branch and cut:
//
//   minimise   sum_v sum_i c_vi s_vi  +  sum_(u,v) sum_ij R_uv,ij e_uv,ij
//   subject to sum_i s_vi = 1                      (one strategy per operator)
//              sum_j e_uv,ij = s_ui, sum_i e_uv,ij = s_vj   (e picks the pair both chose)
//              sum_v sum_i m_vi s_vi <= budget     (when a memory budget is given)
//              s binary, 0 <= e <= 1
//
// With s integral the two marginal rows leave e one choice: 1 on the chosen pair. Costs
// enter in microseconds (GLPK's tolerances are absolute); the solution's cost is then
// recomputed from the graph in seconds.
#pragma once

#include "strategies/intra_op/sharding.h"

namespace dejavu::strategies::intra_op {

struct IlpStats {
  int variables = 0, constraints = 0;
};

// Throws ModelError if GLPK fails; an infeasible budget returns feasible = false.
Solution solve_ilp(const ShardingGraph& g, double memory_budget_bytes, IlpStats* stats = nullptr);

}  // namespace dejavu::strategies::intra_op
