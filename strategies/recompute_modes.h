// Activation recomputation modes, the plan key `recompute` (one per plan or per pipeline
// stage), from the least replayed:
//   none          every activation kept until its backward
//   selective     Megatron's: the core attention replayed, its score matrix not stored
//                 (a fused attention kernel is replayed too, as Megatron-Core checkpoints it)
//   selective-op  torchtitan's op-level policy (selective_ac_option "op"): a layer keeps its
//                 input, its attention's output and every other matmul's output, and replays
//                 the rest (workloads/op_sac.h)
//   save-dot-except-mlpwi  MaxText's remat_policy: a layer keeps its input and the outputs of
//                 its attention projections, and replays the attention kernel, the norms,
//                 the MLP's input projections and its activation (workloads/op_sac.h)
//   save-qkv-proj MaxText's save_qkv_proj: as above but for the attention's output
//                 projection, replayed too
//   full          a layer keeps its input and replays its whole forward
#pragma once

#include <string>
#include <vector>

namespace dejavu::strategies {

struct RecomputeMode {
  const char* name;
  double replayed;  // a rank of how much of a layer's forward it replays, 0 (none) to 1 (full)
};

const std::vector<RecomputeMode>& recompute_modes();
const std::vector<std::string>& recompute_mode_names();  // for ConfigNode::as_choice
std::string recompute_mode_list();                       // "none, selective, selective-op, ..., full"
// Position in recompute_modes(); throws std::invalid_argument on an unknown name.
int recompute_mode_index(const std::string& name);
double recompute_replayed(const std::string& name);  // its RecomputeMode::replayed

}  // namespace dejavu::strategies
