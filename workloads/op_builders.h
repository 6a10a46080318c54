// Building blocks generators share: the ops every model is made of, priced per sample.
#pragma once

#include <string>
#include <vector>

#include "sim/config_node.h"

#include "workloads/model_graph.h"
#include "workloads/op.h"

namespace dejavu::workloads {

// An element-wise or normalisation kernel over `elems` elements of `e` bytes: reads its
// input and writes its output; backward moves about twice as much.
Op memory_op(std::string name, sim::OpClass cls, int layer, double elems, double e, TpMode tp);

// How a language model's loss runs (`cross_entropy:`), each vocabulary-parallel under tensor
// parallelism:
// - unfused: Megatron's VocabParallelCrossEntropy, in fp32 whatever the model's dtype (and
//   Megatron-Core's `native` fusion, which makes the same passes). Per logit, the forward reads
//   the 16-bit logits and writes them as fp32 (e + 4 bytes), reads them for the maximum (4),
//   subtracts it and exponentiates in place (8), reads them for the sum (4): e + 20 bytes; it
//   keeps the fp32 softmax for the backward (4 bytes), which reads it and writes the 16-bit
//   gradient of the logits (4 + e).
// - te: Transformer Engine's Triton parallel_cross_entropy (Megatron-Core's
//   cross_entropy_fusion_impl "te", Megatron-Bridge's performance recipes): an online-softmax
//   kernel reads the logits (e), a second reads them again and writes the gradient in place
//   (2e): 3e; it keeps that gradient in the logits' buffer (e), and the backward scales it by
//   the per-token loss gradient in place (2e). (Transformer Engine 2.18, July 2026, keeps the
//   gradient in fp32 instead; the runs dejavu validates predate it.)
// - flash: FlashAttention's xentropy CUDA kernel, Apex's made to take bf16 (llm-foundry's
//   `loss_fn: fused_crossentropy`, its default through 2024; csrc/xentropy/xentropy_kernel.cu):
//   one block a row reads it for the maximum and sum, again for the sum of exponentials (2e,
//   each pass counted from HBM as every kernel's are), and writes the loss; the backward reads
//   the logits and writes the gradient (2e); it keeps the logits (e).
enum class CrossEntropyKind { Unfused, TransformerEngine, Flash };
// Reads `cross_entropy: unfused | te | flash` (the fallback when absent).
CrossEntropyKind cross_entropy_key(const ConfigNode& n, CrossEntropyKind fallback);
const char* to_string(CrossEntropyKind k);
const std::vector<std::string>& cross_entropy_names();  // unfused, te, flash
CrossEntropyKind cross_entropy_of(const std::string& name);

// A language model's loss: cross-entropy over the vocabulary as `kind` runs it (above).
Op cross_entropy_op(std::string name, int layer, double tokens, double vocab, double e,
                    CrossEntropyKind kind = CrossEntropyKind::Unfused);

// A language model's vocabulary-parallel head, y[s, V] = x[s, h] · W[h, V], after the layers
// (`layer`): it keeps its whole input s·h (the logits are the loss's), runs in the storage
// dtype when the layers' GEMMs are fp8/fp4, and its input gradient is a partial sum on every
// tensor-parallel rank: Megatron's f before the head (copy_to_tensor_model_parallel_region, or
// under sequence parallelism the gather whose backward is a reduce-scatter) reduces s·h
// elements after its backward, as before every column-parallel GEMM of the layers. No
// parameters of its own (tied to the embedding); a caller with its own weights sets them.
Op lm_head_op(int layer, double s, double h, double vocab, double e);

// y[s, n] = x[s, k] · W[k, n]: 2·s·k·n FLOPs forward, twice that backward (dX and dW).
Op gemm(std::string name, int layer, double s, double k, double n, double e, bool bias);

// How attention runs: unfused (Megatron 2021-22: batched matmuls, the a·s² scores
// written, masked, softmaxed and dropped out in memory and stored for the backward) or
// FlashAttention (one fused kernel, compute-bound, tiles never leave the chip, the scores
// recomputed in the backward and none stored; causal masks skip half the tiles), or the
// same algorithm written in Triton (MosaicML llm-foundry's default `attn_impl: triton`
// through 2023) or in cuDNN (Transformer Engine's FusedAttention, what it runs on Hopper and
// later: Megatron-Core, NeMo, Megatron-Bridge): FlashAttention's work and memory, priced at
// each implementation's own measured speed.
enum class AttentionKind { Unfused, Flash, Triton, Cudnn };
// Reads `attention: flash | cudnn | triton | unfused` (the fallback when absent).
AttentionKind attention_key(const ConfigNode& n, AttentionKind fallback);
const char* to_string(AttentionKind k);
const std::vector<std::string>& attention_names();  // flash, cudnn, triton, unfused
// The kind a name in attention_names() stands for.
AttentionKind attention_of(const std::string& name);

// What a transformer layer's GEMM keeps of each input element for its backward (the weight
// gradient): the storage dtype's bytes, or under fp8/fp4 the quantized copy Transformer
// Engine's linear layers keep (te.Linear and GroupedLinear save their quantized input,
// column-wise data only: 1 byte an element in fp8, 0.5 in fp4; block scales not counted).
double saved_gemm_input_bytes(sim::DType dtype);
// What the layer's output projection keeps of the attention output O per element. A fused
// attention kernel keeps O itself (its backward needs it), in 16 bits one tensor shared with
// the projection's saved input; under fp8/fp4 the projection keeps its quantized copy
// beside it. Unfused attention keeps no O: only the projection's input.
double saved_attention_output_bytes(sim::DType dtype, AttentionKind kind);

// Self-attention over s tokens of width h in a heads (kv: the keys' and values' width, h
// without grouped-query attention). Model FLOPs by Megatron's convention: scores Q·K^T and
// the weighted sum with V, 2·s²·h each, whatever the kernel. Unfused with `dropout`, a
// byte of dropout mask per score is stored beside the scores and their softmax.
Op attention_op(std::string name, int layer, double s, double h, double a, double kv, double e, AttentionKind kind,
                bool causal, bool dropout = true);

// Builds a model's graph op by op: each op reads the previous one's output, unless the
// generator starts a branch elsewhere (`resume`) or has the next op also read another
// op's output (`feed_next`: a residual connection, the end of a branch).
class Chain {
 public:
  explicit Chain(ModelGraph& g) : g_(g) {}
  int add(Op op) {
    const int v = g_.add_op(std::move(op));
    if (prev_ >= 0) g_.add_edge(prev_, v);
    for (int u : feeds_)
      if (u != prev_) g_.add_edge(u, v);
    feeds_.clear();
    prev_ = v;
    return v;
  }
  // The next op reads `from` (-1: nothing, a new input) instead of the last op added.
  void resume(int from) { prev_ = from; }
  void feed_next(int v) { feeds_.push_back(v); }
  int last() const { return prev_; }

 private:
  ModelGraph& g_;
  int prev_ = -1;
  std::vector<int> feeds_;
};

// Reads a positive whole number (`required`, or `fallback` when absent) and says which key
// is wrong otherwise.
// A whole number from 1 to `max` under `key` (the fallback when it may be left out).
int positive_key(const ConfigNode& n, const char* key, long long fallback, bool required, long long max);
sim::DType dtype_key(const ConfigNode& n, sim::DType fallback);

}  // namespace dejavu::workloads
