// DLRM (Naumov et al. 2019): dense features through a bottom MLP, sparse features pooled
// from embedding tables, pairwise dot-product interaction, a top MLP. Tables are sharded
// over the plan's expert-parallel group (`ep`, usually the data-parallel degree):
//   table-wise    whole tables per GPU; pooled vectors all-to-all'd to each sample's GPU
//   column-wise   a slice of every table's columns per GPU; also an all-to-all
//   row-wise      a slice of every table's rows per GPU; partial sums reduce-scattered
//                 (and the gradients all-gathered)
//   data-parallel every GPU holds every table; no exchange, but every table's gradient is
//                 all-reduced
//
//   kind: dlrm
//   dense_features: 13
//   tables: [{count: 26, rows: 4000000, dim: 128, pooling: 1}]
//   bottom_mlp: [512, 256, 128]        # ends at the embedding dimension
//   top_mlp: [1024, 1024, 512, 256, 1]
//   sharding: table-wise
//   dtype: fp32
#pragma once

#include "workloads/generator.h"

namespace dejavu::workloads {

class DlrmGenerator : public Generator {
 public:
  ModelGraph generate(const ConfigNode& config) const override;
};

// The ways a table group may be sharded, as the workload's and a plan's `sharding` name them.
const std::vector<std::string>& embedding_shardings();

// The model regenerated from its workload text with its tables sharded by `modes`: one mode
// for every table group, or one per group (model.embedding_sharding.size() of them).
ModelGraph with_embedding_sharding(const ModelGraph& model, const std::vector<std::string>& modes);

}  // namespace dejavu::workloads
