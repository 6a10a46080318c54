// A model as one token slice of each sequence sees it (TeraPipe, Li et al. 2021): tokens
// [offset, offset + length) of the `tokens_per_sample`, every per-sample figure for those
// tokens. What is linear in the tokens (GEMMs, norms, element-wise ops, activations, the
// pipeline boundary, tensor-parallel synchronisations) scales by length / s; causal
// attention by the query-key pairs the slice computes, its queries against the keys of
// every earlier token and its own:
//   fused (FlashAttention, Triton): the causal pairs, l·o + l²/2 of s²/2 (FLOPs); it reads
//     the queries and writes the outputs of its l tokens and reads the keys and values of
//     o + l, taken as (2l + o) / 2s of the whole sequence's traffic (exact when keys and
//     values are as wide as queries, an approximation under grouped-query attention);
//     stores its own tokens' tensors (l / s);
//   unfused: the whole l x (o + l) score rectangle, masked (FLOPs, memory traffic and the
//     stored scores: l(o + l) / s²; the scores dominate the traffic); the rest of what it
//     stores by l / s.
// Weights are read whole by every slice.
#pragma once

#include "workloads/model_graph.h"

namespace dejavu::workloads {

// Whether every attention op of the model is causal (and the model has a sequence).
bool sliceable_by_tokens(const ModelGraph& model);

// Requires 0 <= offset, 0 < length, offset + length <= model.tokens_per_sample.
ModelGraph token_slice(const ModelGraph& model, double offset, double length);

// The fractions of the whole sequence's attention a slice computes.
double causal_pair_fraction(double offset, double length, double s);    // (2lo + l²) / s²
double unfused_score_fraction(double offset, double length, double s);  // l(o + l) / s²

}  // namespace dejavu::workloads
