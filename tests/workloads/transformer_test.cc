#include "workloads/transformer.h"

#include <gtest/gtest.h>

#include "sim/config_node.h"
#include "sim/error.h"
#include "workloads/generator.h"

namespace dejavu::workloads {
namespace {

std::string preset(const std::string& name) {
  return std::string(DEJAVU_SOURCE_DIR) + "/workloads/presets/" + name + ".yaml";
}

// 12lh²(1 + 13/(12h) + (V+s)/(12lh)): Narayanan et al. 2021, eq. (2) plus positions.
double megatron_params(double l, double h, double V, double s) {
  return 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
}

TransformerConfig gpt(int layers, int hidden, int heads, int seq_len, int vocab) {
  TransformerConfig c;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.seq_len = seq_len;
  c.vocab = vocab;
  return c;
}

TEST(Transformer, PresetParameterCountsMatchMegatronFormula) {
  struct Case {
    const char* name;
    double l, h;
  } cases[] = {{"gpt3-1.3b", 24, 2048}, {"gpt3-13b", 40, 5120}, {"gpt3-175b", 96, 12288}};
  for (const Case& c : cases) {
    const ModelGraph g = load_workload_file(preset(c.name));
    const double expected = megatron_params(c.l, c.h, 51200, 2048);
    EXPECT_NEAR(g.parameter_count() / expected, 1.0, 0.01) << c.name;
  }
}

TEST(Transformer, Gpt3_175bHas174_6BillionParameters) {
  const ModelGraph g = load_workload_file(preset("gpt3-175b"));
  EXPECT_NEAR(g.parameter_count(), 174.6e9, 0.001 * 174.6e9);
}

// An untied head has its own vocab x hidden weights: Megatron-Core's H100 table (README at
// f2e5db402c) sizes its GPT of 24 layers at h 2048, V 131072 and 4096 tokens as 1.7B, the tied
// count's 1.48B plus V h = 0.27B (1.75B; tied it would read 1.5B). The FLOPs do not change.
TEST(Transformer, AnUntiedHeadAddsVocabTimesHiddenParameters) {
  TransformerConfig c = gpt(24, 2048, 16, 4096, 131072);
  const ModelGraph tied = make_transformer(c);
  c.tie_embeddings = false;
  const ModelGraph untied = make_transformer(c);
  EXPECT_NEAR(tied.parameter_count() / megatron_params(24, 2048, 131072, 4096), 1.0, 0.001);
  EXPECT_DOUBLE_EQ(untied.parameter_count() - tied.parameter_count(), 131072.0 * 2048);
  EXPECT_NEAR(untied.parameter_count() / 1e9, 1.75, 0.01);
  EXPECT_DOUBLE_EQ(untied.model_flops(1), tied.model_flops(1));
  const ModelGraph read = load_workload(
      ConfigNode::load_string("kind: transformer\nlayers: 24\nhidden: 2048\nheads: 16\nseq_len: 4096\nvocab: 131072\n"
                              "tie_embeddings: false\n",
                              "untied.yaml"));
  EXPECT_DOUBLE_EQ(read.parameter_count(), untied.parameter_count());
}

TEST(Transformer, ModelFlopsMatchMegatronCount) {
  const ModelGraph g = make_transformer(gpt(40, 5120, 40, 2048, 51200));
  const double B = 512, s = 2048, l = 40, h = 5120, V = 51200;
  const double expected = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(g.model_flops(B) / expected, 1.0, 1e-12);
}

TEST(Transformer, LayerForwardIs24bsh2Plus4bs2h) {
  TransformerConfig c{"t", 1, 256, 8, 128, 1000, 0, sim::DType::BF16};
  const ModelGraph g = make_transformer(c);
  double flops = 0;
  for (size_t v = 0; v < g.size(); ++v)
    if (g.op(v).layer == 0 && g.op(v).counts_as_model_flops) flops += g.op(v).fwd_flops;
  const double s = 128, h = 256;
  EXPECT_DOUBLE_EQ(flops, 24 * s * h * h + 4 * s * s * h);
}

TEST(Encoders, BertLargeAndVitHugeMatchTheirPapers) {
  // BERT-large with its pre-training heads: 336M (Hugging Face's bert-large-uncased card;
  // Devlin et al. 2019 round it to 340M).
  EXPECT_NEAR(load_workload_file(preset("bert-large")).parameter_count() / 336e6, 1.0, 0.01);
  // Dosovitskiy et al. 2021, Table 1: ViT-Huge 632M.
  const ModelGraph vit = load_workload_file(preset("vit-h14"));
  EXPECT_NEAR(vit.parameter_count() / 632e6, 1.0, 0.01);
  // 257 tokens: 16 x 16 patches of 14 x 14 pixels and the class token.
  double first_layer = 0;
  for (size_t v = 0; v < vit.size(); ++v)
    if (vit.op(static_cast<int>(v)).layer == 0 && vit.op(static_cast<int>(v)).counts_as_model_flops)
      first_layer += vit.op(static_cast<int>(v)).fwd_flops;
  const double s = 257, h = 1280;
  EXPECT_DOUBLE_EQ(first_layer, 24 * s * h * h + 4 * s * s * h);
}

TEST(ModelGraph, CycleIsAModelError) {
  ModelGraph g;
  g.name = "loop";
  const int a = g.add_op(Op{}), b = g.add_op(Op{});
  g.add_edge(a, b);
  g.add_edge(b, a);
  EXPECT_THROW(g.topological_order(), ModelError);
}

TEST(Transformer, HeadsMustDivideHidden) {
  try {
    load_workload_file(std::string(DEJAVU_SOURCE_DIR) + "/tests/fixtures/bad/heads-not-dividing.workload.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("heads-not-dividing.workload.yaml:4:8: heads: must divide hidden (100)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dejavu::workloads
