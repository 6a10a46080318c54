#include "workloads/model_graph.h"

#include <gtest/gtest.h>

#include "sim/error.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::workloads {
namespace {

using dejavu::testing::src;

int add(ModelGraph& g, const std::string& name, double flops) {
  Op op;
  op.name = name;
  op.fwd_flops = flops;
  return g.add_op(op);
}

std::vector<std::string> names(const ModelGraph& g, const std::vector<int>& ops) {
  std::vector<std::string> out;
  for (int v : ops) out.push_back(g.op(v).name);
  return out;
}

// A diamond a -> {b, c} -> d, with c added before b: independent branches come out in the
// order they were added, and the critical path takes the heavier branch.
TEST(ModelGraph, BranchesInTheOrderAddedAndTheHeavierOneIsCritical) {
  ModelGraph g;
  const int a = add(g, "a", 1), c = add(g, "c", 5), b = add(g, "b", 2), d = add(g, "d", 1);
  g.add_edge(a, b);
  g.add_edge(a, c);
  g.add_edge(b, d);
  g.add_edge(c, d);
  EXPECT_EQ(names(g, g.topological_order()), (std::vector<std::string>{"a", "c", "b", "d"}));
  const auto flops = [](const Op& op) { return op.fwd_flops; };
  EXPECT_EQ(names(g, g.critical_path(flops)), (std::vector<std::string>{"a", "c", "d"}));  // 7 against 4
  EXPECT_EQ(g.inputs(d).size(), 2u);
  EXPECT_EQ(g.consumers(a).size(), 2u);
}

TEST(ModelGraph, ACycleIsRefused) {
  ModelGraph g;
  const int a = add(g, "a", 1), b = add(g, "b", 1);
  g.add_edge(a, b);
  g.add_edge(b, a);
  EXPECT_THROW(g.topological_order(), ModelError);
}

// The generators' branches: the residual path beside attention and the MLP, DLRM's
// lookups beside its bottom MLP, ResNet's projection shortcut beside conv1..conv3.
TEST(ModelGraph, GeneratorsEmitTheBranchesTheModelsHave) {
  auto find = [](const ModelGraph& g, const std::string& name) {
    for (size_t v = 0; v < g.size(); ++v)
      if (g.op(static_cast<int>(v)).name == name) return static_cast<int>(v);
    ADD_FAILURE() << name;
    return 0;
  };
  const ModelGraph gpt = load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  // L1's input (L0's last op) feeds its ln1 and, around attention, its dropout-and-add.
  EXPECT_EQ(gpt.inputs(find(gpt, "L1.attn_dropout")),
            (std::vector<int>{find(gpt, "L1.proj"), find(gpt, "L0.mlp_dropout")}));
  EXPECT_EQ(gpt.inputs(find(gpt, "L1.mlp_dropout")),
            (std::vector<int>{find(gpt, "L1.fc2"), find(gpt, "L1.attn_dropout")}));

  const ModelGraph dlrm = load_workload_file(src("workloads/presets/dlrm-criteo.yaml"));
  EXPECT_TRUE(dlrm.inputs(find(dlrm, "embedding_lookup")).empty());
  EXPECT_TRUE(dlrm.inputs(find(dlrm, "bottom_mlp0")).empty());
  EXPECT_EQ(dlrm.inputs(find(dlrm, "interaction")).size(), 2u);
  // The critical path by forward FLOPs runs through the bottom MLP, not the lookups.
  const auto path = dlrm.critical_path([](const Op& op) { return op.fwd_flops; });
  EXPECT_EQ(dlrm.op(path.front()).name, "bottom_mlp0");

  const ModelGraph resnet = load_workload_file(src("workloads/presets/resnet50.yaml"));
  const int in = find(resnet, "stem.bn");
  EXPECT_EQ(resnet.consumers(in), (std::vector<int>{find(resnet, "L0.conv1"), find(resnet, "L0.downsample")}));
  EXPECT_EQ(resnet.inputs(find(resnet, "L0.residual_relu")).size(), 2u);
  EXPECT_EQ(resnet.inputs(find(resnet, "L1.residual_relu")),
            (std::vector<int>{find(resnet, "L1.conv3.bn"), find(resnet, "L0.residual_relu")}));
}

TEST(ModelGraph, SharedExpertsRunBesideTheRoutedOnes) {
  const ModelGraph g = load_workload(ConfigNode::load_string(
      "kind: llama\nlayers: 2\nhidden: 64\nheads: 4\nffn_hidden: 128\nseq_len: 16\nvocab: 100\nexperts: 4\n"
      "top_k: 2\nshared_experts: 1\n",
      "moe.yaml"));
  auto find = [&](const std::string& name) {
    for (size_t v = 0; v < g.size(); ++v)
      if (g.op(static_cast<int>(v)).name == name) return static_cast<int>(v);
    return -1;
  };
  EXPECT_EQ(g.inputs(find("L0.shared_gate_up")), (std::vector<int>{find("L0.rmsnorm2")}));
  EXPECT_EQ(g.inputs(find("L0.gate_up")), (std::vector<int>{find("L0.router")}));
  // The next layer's norm adds the routed experts, the shared ones and the residual.
  EXPECT_EQ(g.inputs(find("L1.rmsnorm1")).size(), 3u);
  EXPECT_FALSE(g.op(find("L0.shared_down")).expert);
  EXPECT_THROW(load_workload(ConfigNode::load_string(
                   "kind: llama\nlayers: 2\nhidden: 64\nheads: 4\nffn_hidden: 128\nseq_len: 16\nvocab: 100\n"
                   "shared_experts: 1\n",
                   "dense.yaml")),
               ConfigError);
}

}  // namespace
}  // namespace dejavu::workloads
