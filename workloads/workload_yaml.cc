#include "workloads/workload_yaml.h"

#include <sstream>

#include "sim/config_node.h"
#include "sim/error.h"
#include "workloads/op_builders.h"

namespace dejavu::workloads {

namespace {

// The keys both decoders share, in the order their generators read them.
template <typename Config>
void write_shape(std::ostream& out, const Config& c, const char* kind, const std::string& comment) {
  out << "# " << comment << "\n";
  out << "kind: " << kind << "\nname: " << yaml_scalar(c.name) << "\n";
  out << "layers: " << c.layers << "\nhidden: " << c.hidden << "\nheads: " << c.heads << "\n";
}

}  // namespace

void write_workload_yaml(std::ostream& out, const TransformerConfig& c, const std::string& comment) {
  if (c.ends != TransformerConfig::Ends::Gpt) throw Error("only a GPT-style transformer is written as a workload YAML");
  write_shape(out, c, "transformer", comment);
  out << "ffn_hidden: " << (c.ffn_hidden > 0 ? c.ffn_hidden : 4 * c.hidden) << "\n";
  out << "seq_len: " << c.seq_len << "\nvocab: " << c.vocab << "\n";
  out << "dtype: " << sim::to_string(c.dtype) << "\nattention: " << to_string(c.attention) << "\n";
  out << "cross_entropy: " << to_string(c.cross_entropy) << "\n";
  out << "dropout: " << (c.dropout ? "true" : "false") << "\n";
  if (!c.tie_embeddings) out << "tie_embeddings: false\n";
}

void write_workload_yaml(std::ostream& out, const LlamaConfig& c, const std::string& comment) {
  write_shape(out, c, "llama", comment);
  out << "kv_heads: " << c.kv_heads << "\nffn_hidden: " << c.ffn_hidden << "\n";
  out << "seq_len: " << c.seq_len << "\nvocab: " << c.vocab << "\n";
  out << "dtype: " << sim::to_string(c.dtype) << "\nattention: " << to_string(c.attention) << "\n";
  out << "cross_entropy: " << to_string(c.cross_entropy) << "\n";
  out << "mlp: " << (c.gated_mlp ? "swiglu" : "squared_relu") << "\n";
  if (c.tie_embeddings) out << "tie_embeddings: true\n";
  if (c.experts > 0) {
    out << "experts: " << c.experts << "\ntop_k: " << c.top_k << "\n";
    std::ostringstream factor;
    factor.precision(17);
    factor << c.capacity_factor;
    out << "capacity_factor: " << factor.str() << "\n";
    if (c.shared_experts > 0) out << "shared_experts: " << c.shared_experts << "\n";
  }
}

}  // namespace dejavu::workloads
