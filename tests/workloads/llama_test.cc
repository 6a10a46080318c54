#include "workloads/llama.h"

#include <gtest/gtest.h>

#include "sim/error.h"
#include "workloads/generator.h"

namespace dejavu::workloads {
namespace {

std::string preset(const std::string& name) {
  return std::string(DEJAVU_SOURCE_DIR) + "/workloads/presets/" + name + ".yaml";
}

TEST(Llama, PresetsMatchPublishedParameterCounts) {
  // Meta's model cards: 8.03B, 70.6B, 405.9B parameters.
  struct Case {
    const char* name;
    double params;
  } cases[] = {{"llama3-8b", 8.03e9}, {"llama3-70b", 70.6e9}, {"llama3-405b", 405.9e9}};
  for (const Case& c : cases)
    EXPECT_NEAR(load_workload_file(preset(c.name)).parameter_count() / c.params, 1.0, 0.01) << c.name;
}

// Nemotron-4 15B (Parmar et al. 2024, Table 1): 32 layers, hidden 6144, 48 heads, 8 KV
// heads, a squared-ReLU MLP of 24576 (one up projection, not a gated pair), 256k vocabulary,
// untied: 12.5 billion non-embedding and 3.2 billion embedding parameters.
TEST(Llama, SquaredReluMlpMatchesNemotron4) {
  const ModelGraph g = load_workload(ConfigNode::load_string(
      "kind: llama\nlayers: 32\nhidden: 6144\nheads: 48\nkv_heads: 8\nffn_hidden: 24576\nseq_len: 4096\n"
      "vocab: 256000\nmlp: squared_relu\n",
      "nemotron.yaml"));
  double layers = 0;
  for (size_t v = 0; v < g.size(); ++v)
    if (g.op(static_cast<int>(v)).layer >= 0 && g.op(static_cast<int>(v)).layer < 32)
      layers += g.op(static_cast<int>(v)).params;
  EXPECT_NEAR(layers / 1e9, 12.5, 0.1);
  EXPECT_NEAR((g.parameter_count() - layers) / 1e9, 3.2, 0.1);
  EXPECT_THROW(load_workload(ConfigNode::load_string(
                   "kind: llama\nlayers: 1\nhidden: 64\nheads: 4\nffn_hidden: 128\nseq_len: 16\nvocab: 10\n"
                   "mlp: geglu\n",
                   "bad.yaml")),
               ConfigError);
}

TEST(Llama, LayerParametersByHand) {
  // h = 64, 4 heads of 16, 2 key/value heads (width 32), ffn 96:
  // q 64·64 + k, v 2·64·32 + out 64·64 + gate/up 2·64·96 + down 96·64 + two norms 2·64.
  const ModelGraph g = make_llama({"tiny", 1, 64, 4, 2, 96, 16, 100, false, sim::DType::BF16});
  double layer = 0;
  for (size_t v = 0; v < g.size(); ++v)
    if (g.op(v).layer == 0) layer += g.op(v).params;
  EXPECT_DOUBLE_EQ(layer, 64 * 64 + 2 * 64 * 32 + 64 * 64 + 2 * 64 * 96 + 96 * 64 + 2 * 64);
  EXPECT_DOUBLE_EQ(g.parameter_count(), layer + 2 * 100 * 64 + 64);  // untied embedding and head, final norm
  const ModelGraph tied = make_llama({"tiny", 1, 64, 4, 2, 96, 16, 100, true, sim::DType::BF16});
  EXPECT_DOUBLE_EQ(tied.parameter_count(), layer + 100 * 64 + 64);
}

TEST(Llama, KeyValueHeadsMustDivideHeads) {
  try {
    load_workload(ConfigNode::load_string(
        "kind: llama\nlayers: 2\nhidden: 64\nheads: 4\nkv_heads: 3\nffn_hidden: 96\nseq_len: 16\nvocab: 100\n",
        "l.yaml"));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "l.yaml:5:11: kv_heads: must divide heads (4), got 3");
  }
}

TEST(Llama, MixtralHas46_7BillionParameters) {
  const ModelGraph g = load_workload_file(preset("mixtral-8x7b"));
  EXPECT_NEAR(g.parameter_count() / 46.7e9, 1.0, 0.01);
  EXPECT_EQ(g.experts, 8);
}

}  // namespace
}  // namespace dejavu::workloads
