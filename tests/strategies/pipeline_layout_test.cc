#include "strategies/pipeline_layout.h"

#include <gtest/gtest.h>

#include "platforms/cluster.h"
#include "sim/error.h"
#include "strategies/plan.h"
#include "strategies/plan_cluster.h"
#include "strategies/stage_work.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies {
namespace {

using dejavu::testing::src;

std::vector<int> repeated(std::initializer_list<std::pair<int, int>> runs) {  // (count, layers) runs
  std::vector<int> out;
  for (auto [count, layers] : runs) out.insert(out.end(), count, layers);
  return out;
}

// Megatron-Bridge's Llama 3 70B H100 FP8-CS layout (perf_recipes/llama/h100/llama3.py,
// August 2026), unrolled by hand: E and 2 layers; 34 stages of 2; 3; 3 stages of 2; 1 and L.
// 40 stages (pp 8 x vp 5) holding 2 + 68 + 3 + 6 + 1 = 80 layers.
TEST(PipelineLayout, UnrollsMegatronCoresNotation) {
  const PipelineLayout l = parse_pipeline_layout("Et*2|(t*2|)*34,t*3|(t*2|)*3,tL");
  ASSERT_EQ(l.error, "");
  EXPECT_EQ(l.layers, repeated({{35, 2}, {1, 3}, {3, 2}, {1, 1}}));
  // Kimi K2's (61 layers over 32 stages): the loss alone on the last stage.
  const PipelineLayout k = parse_pipeline_layout("Et|(tt|)*30L");
  ASSERT_EQ(k.error, "");
  EXPECT_EQ(k.layers, repeated({{1, 1}, {30, 2}, {1, 0}}));
  // Commas are cosmetic; one stage holds everything.
  EXPECT_EQ(parse_pipeline_layout("E,t*3,L").layers, std::vector<int>{3});
  EXPECT_EQ(parse_pipeline_layout("E|t*12|L").layers, (std::vector<int>{0, 12, 0}));
}

TEST(PipelineLayout, NamesWhatIsWrong) {
  auto error = [](const std::string& text) { return parse_pipeline_layout(text).error; };
  EXPECT_NE(error("Et*3|(tt|)*29,m|L").find("m (a multi-token-prediction layer)"), std::string::npos);
  EXPECT_NE(error("tt|tL").find("no E opening the first stage"), std::string::npos);
  EXPECT_NE(error("Et|tt").find("no L closing the last stage"), std::string::npos);
  EXPECT_NE(error("Et|Et|tL").find("E where the embedding cannot be"), std::string::npos);
  EXPECT_NE(error("EtL|tL").find("L where the loss cannot be"), std::string::npos);
  EXPECT_NE(error("Et||tL").find("stage 1 holds nothing"), std::string::npos);
  EXPECT_NE(error("Et|(t|)*0tL").find("a repetition count of 0"), std::string::npos);
  EXPECT_NE(error("Et|(t|tL").find("a ( without its )"), std::string::npos);
  EXPECT_NE(error("Et|t)tL").find("a ) without its ("), std::string::npos);
  EXPECT_NE(error("E((t|)*2)*2L").find("groups do not nest"), std::string::npos);
  EXPECT_NE(error("Et|(t|)tL").find("a group without *n"), std::string::npos);
  EXPECT_NE(error("Et*|tL").find("a * without a count"), std::string::npos);
  EXPECT_NE(error("Ex|tL").find("unknown character 'x'"), std::string::npos);
  EXPECT_NE(error("").find("an empty layout"), std::string::npos);
  // A short string cannot ask for unbounded text: 4096 x 4096 layers stop at the limit.
  EXPECT_NE(error("E(t*4096|)*4096L").find("unrolls to more than"), std::string::npos);
  EXPECT_NE(error("Et*99999999999999999999L").find("unrolls to more than"), std::string::npos);
}

// The plan key: the layout's layer counts are the stages; GPT-3 1.3B (24 layers) on pp 2
// with 13 layers on the first stage puts layer 12 there, the head and loss on stage 1.
TEST(PipelineLayout, ThePlanKeySplitsTheModelAsWritten) {
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  const std::string head = "dp: 4\nglobal_batch_size: 8\n";
  const Plan p = load_plan(ConfigNode::load_string(head + "pp: 2\npipeline_layout: \"Et*13|t*11L\"\n", "l.yaml"));
  EXPECT_EQ(p.layers_per_stage(24), (std::vector<int>{13, 11}));
  validate(p, model, cluster);
  const auto order = model.topological_order();
  const auto stage = stage_of_ops(model, order, p);
  for (int v : order) {
    const int layer = model.op(v).layer;
    EXPECT_EQ(stage[v], layer < 13 ? 0 : 1) << model.op(v).name;
  }
  auto error = [&](const std::string& plan) {
    try {
      validate(load_plan(ConfigNode::load_string(head + "pp: 2\n" + plan, "l.yaml")), model, cluster);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("pipeline_layout: \"Et*12|t*11L\"\n")
                .find("l.yaml:4:18: pipeline_layout: 2 stages holding 23 layers; valid: pp x virtual_stages = 2 "
                      "stages holding the model's 24 layers"),
            std::string::npos);
  EXPECT_NE(error("pipeline_layout: \"Et*12|t*6|t*6L\"\n").find("3 stages holding 24 layers"), std::string::npos);
  EXPECT_NE(error("pipeline_layout: \"Et*12|m|t*12L\"\n").find("l.yaml:4:18: pipeline_layout: m (a multi-token"),
            std::string::npos);
  EXPECT_NE(error("pipeline_layout: \"Et*12|t*12L\"\nstages: [12, 12]\n")
                .find("pipeline_layout: and stages both say how layers split"),
            std::string::npos);
  EXPECT_NE(error("pipeline_layout: \"Et*12|t*12L\"\naccount_for_loss_in_pipeline_split: true\n")
                .find("and pipeline_layout both say how layers split"),
            std::string::npos);
  // `stages` may leave the first (last) stage the embedding (the loss) alone, no other.
  const std::string chunks = "virtual_stages: 2\nschedule: interleaved-1f1b\n";
  EXPECT_EQ(error(chunks + "stages: [0, 12, 12, 0]\n"), "no error");
  EXPECT_NE(error(chunks + "stages: [12, 0, 12, 0]\n").find("stage 1 of 0 layers"), std::string::npos);
}

}  // namespace
}  // namespace dejavu::strategies
