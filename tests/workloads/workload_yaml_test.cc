#include "workloads/workload_yaml.h"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/config_node.h"
#include "workloads/generator.h"

namespace dejavu::workloads {
namespace {

// The graph a config makes, and the graph its written YAML makes when read back: the same ops,
// parameters and FLOPs (a key the writer dropped would change one: top_k the FLOPs, dropout
// the ops, tied embeddings the parameters).
template <typename Config, typename Make>
void expect_round_trip(const Config& c, Make make) {
  std::ostringstream yaml;
  write_workload_yaml(yaml, c, "a test");
  const ModelGraph direct = make(c);
  const ModelGraph read = load_workload(ConfigNode::load_string(yaml.str(), "written.yaml"));
  EXPECT_EQ(read.size(), direct.size()) << yaml.str();
  EXPECT_EQ(read.parameter_count(), direct.parameter_count()) << yaml.str();
  EXPECT_EQ(read.model_flops(8), direct.model_flops(8)) << yaml.str();
}

TEST(WorkloadYaml, ALlamaWithExpertsReadsBackAsWritten) {
  LlamaConfig c;
  c.name = "moe: a test";  // a colon: quoted
  c.layers = 4, c.hidden = 1024, c.heads = 16, c.kv_heads = 4, c.ffn_hidden = 2816, c.seq_len = 2048;
  c.vocab = 32000, c.tie_embeddings = true, c.experts = 8, c.top_k = 3, c.capacity_factor = 1.25;
  c.shared_experts = 1, c.dtype = sim::DType::FP8, c.attention = AttentionKind::Unfused, c.gated_mlp = false;
  expect_round_trip(c, make_llama);
}

TEST(WorkloadYaml, AGptReadsBackAsWritten) {
  TransformerConfig c;
  c.name = "gpt";
  c.layers = 4, c.hidden = 1024, c.heads = 16, c.seq_len = 1024, c.vocab = 50257, c.ffn_hidden = 3072;
  c.dtype = sim::DType::FP16, c.attention = AttentionKind::Flash, c.dropout = false;
  expect_round_trip(c, make_transformer);
}

}  // namespace
}  // namespace dejavu::workloads
