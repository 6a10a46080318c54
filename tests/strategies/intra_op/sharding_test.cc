// Intra-operator sharding: each re-layout is the collective Megatron runs for it (ring
// closed forms on a star), the ILP equals brute force on random graphs and a hand-worked
// chain, and on real layers it finds Megatron's split where that is known to be best and
// data parallelism where the activations outweigh the weights.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "platforms/cluster.h"
#include "strategies/intra_op/ilp.h"
#include "strategies/intra_op/layer_graph.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::strategies::intra_op {
namespace {

constexpr double kNoBudget = std::numeric_limits<double>::infinity();
using dejavu::testing::src;

// 4 hosts on one switch, bandwidth B per direction, no latency: a ring all-gather or
// reduce-scatter of S bytes takes 3 steps of S/4 over B, an all-reduce 6.
sim::Network star4(double B, double latency_s = 0) {
  sim::Network net;
  const int sw = net.add_switch("switch");
  for (int i = 0; i < 4; ++i)
    net.add_link("l" + std::to_string(i), net.add_host("h" + std::to_string(i)), sw, B, latency_s / 2);
  return net;
}

TEST(Resharding, EachMoveIsTheCollectiveMegatronRuns) {
  const double B = 100e9, S = 64e6;
  const sim::Network net = star4(B);
  const auto ring = sim::collective_algorithms().make("ring");
  const Resharding r(net, {1, 2, 3, 4}, *ring);
  const double gather = 3 * S / 4 / B, all_reduce = 6 * S / 4 / B;
  EXPECT_EQ(r.move_s(Layout::Replicated, Layout::SplitTokens, S), 0);  // a slice of what is held
  EXPECT_EQ(r.move_s(Layout::SplitTokens, Layout::SplitTokens, S), 0);
  EXPECT_NEAR(r.move_s(Layout::SplitTokens, Layout::Replicated, S), gather, 1e-15);
  EXPECT_NEAR(r.move_s(Layout::Partial, Layout::Replicated, S), all_reduce, 1e-15);
  EXPECT_NEAR(r.move_s(Layout::Partial, Layout::SplitTokens, S), gather, 1e-15);  // reduce-scatter
  // S0 -> S1: each GPU sends 3 of the 4 parts of its quarter, S/16 each, through its link.
  EXPECT_NEAR(r.move_s(Layout::SplitTokens, Layout::SplitFeatures, S), 3 * S / 16 / B, 1e-15);

  const Strategy replicated{"replicated"}, column{"columns", Layout::Replicated, true, Layout::SplitFeatures},
      row{"rows", Layout::SplitFeatures, false, Layout::Partial},
      tokens{"tokens", Layout::SplitTokens, false, Layout::SplitTokens};
  // Megatron's f (all-reduce of the input gradient) and g (all-reduce of the output).
  EXPECT_NEAR(r.edge_s(replicated, column, S), all_reduce, 1e-15);
  EXPECT_NEAR(r.edge_s(row, replicated, S), all_reduce, 1e-15);
  // Sequence parallelism: all-gather forward and reduce-scatter backward, and the reverse.
  EXPECT_NEAR(r.edge_s(tokens, column, S), 2 * gather, 1e-15);
  EXPECT_NEAR(r.edge_s(row, tokens, S), 2 * gather, 1e-15);
  // Column to row: the split features pass straight through, both ways.
  EXPECT_EQ(r.edge_s(column, row, S), 0);
}

TEST(Resharding, ABucketedWeightGradientPaysItsBytesNotTheLatency) {
  // Ring all-reduce with host-to-host latency a: 6 (S/4 / B + a); a bucket's share of S
  // bytes is that less the same all-reduce of one byte: 6 (S - 1) / 4 / B.
  const double B = 100e9, a = 5e-6, S = 8e6;
  const sim::Network net = star4(B, a);
  const auto ring = sim::collective_algorithms().make("ring");
  const Resharding r(net, {1, 2, 3, 4}, *ring);
  EXPECT_NEAR(r.collective_s(sim::CollectiveOp::AllReduce, S), 6 * (S / 4 / B + a), 1e-15);
  EXPECT_NEAR(r.bucketed_s(sim::CollectiveOp::AllReduce, S), 6 * (S - 1) / 4 / B, 1e-15);
}

// Two operators a, b; costs a = (1, 2), b = (2, 1); the edge costs 5 where both pick the
// same index: (a0, b1) costs 1 + 1 = 2, the optimum; with a0's memory over the budget,
// (a1, b0) at 2 + 2 = 4.
ShardingGraph chain() {
  ShardingGraph g;
  g.nodes.resize(2);
  g.nodes[0].strategies = {{"a0"}, {"a1"}};
  g.nodes[1].strategies = {{"b0"}, {"b1"}};
  g.nodes[0].strategies[0].compute_s = 1;
  g.nodes[0].strategies[1].compute_s = 2;
  g.nodes[1].strategies[0].compute_s = 2;
  g.nodes[1].strategies[1].compute_s = 1;
  g.nodes[0].strategies[0].memory_bytes = 10;
  for (auto* s : {&g.nodes[0].strategies[1], &g.nodes[1].strategies[0], &g.nodes[1].strategies[1]}) s->memory_bytes = 1;
  g.edges.push_back({0, 1, {{5, 0}, {0, 5}}});
  return g;
}

TEST(IntraOpIlp, HandWorkedChain) {
  const ShardingGraph g = chain();
  Solution s = solve_ilp(g, kNoBudget);
  ASSERT_TRUE(s.feasible);
  EXPECT_EQ(s.choice, (Choice{0, 1}));
  EXPECT_DOUBLE_EQ(s.cost_s, 2);
  s = solve_ilp(g, 5);
  ASSERT_TRUE(s.feasible);
  EXPECT_EQ(s.choice, (Choice{1, 0}));
  EXPECT_DOUBLE_EQ(s.cost_s, 4);
  EXPECT_DOUBLE_EQ(s.memory_bytes, 2);
  EXPECT_FALSE(solve_ilp(g, 1.5).feasible);
  EXPECT_FALSE(brute_force(g, 1.5).feasible);
}

ShardingGraph random_graph(std::mt19937& rng) {
  std::uniform_int_distribution<int> nodes(1, 6), strategies(1, 4);
  std::uniform_real_distribution<double> cost(0, 1e-3), mem(0, 1e9), coin(0, 1);
  ShardingGraph g;
  g.nodes.resize(nodes(rng));
  for (Node& n : g.nodes) {
    n.strategies.resize(strategies(rng));
    for (Strategy& s : n.strategies) {
      s.compute_s = cost(rng);
      s.memory_bytes = mem(rng);
    }
  }
  for (size_t u = 0; u < g.nodes.size(); ++u)
    for (size_t v = 0; v < g.nodes.size(); ++v)
      if (u != v && coin(rng) < 0.35) {
        Edge e{static_cast<int>(u), static_cast<int>(v), {}};
        e.cost_s.assign(g.nodes[u].strategies.size(), std::vector<double>(g.nodes[v].strategies.size()));
        for (auto& row : e.cost_s)
          for (double& c : row) c = coin(rng) < 0.3 ? 0 : cost(rng);
        g.edges.push_back(std::move(e));
      }
  return g;
}

TEST(IntraOpIlp, EqualsBruteForceOnRandomGraphsOfUpToSixOperators) {
  std::mt19937 rng(20261126);
  std::uniform_real_distribution<double> budget(0, 4e9);
  int feasible = 0, infeasible = 0;
  for (int k = 0; k < 300; ++k) {
    const ShardingGraph g = random_graph(rng);
    const double b = k % 2 ? budget(rng) : kNoBudget;
    const Solution ilp = solve_ilp(g, b), brute = brute_force(g, b);
    ASSERT_EQ(ilp.feasible, brute.feasible) << "graph " << k;
    if (!ilp.feasible) {
      ++infeasible;
      continue;
    }
    ++feasible;
    EXPECT_NEAR(ilp.cost_s, brute.cost_s, 1e-12) << "graph " << k;
    EXPECT_LE(ilp.memory_bytes, b) << "graph " << k;
  }
  EXPECT_GT(infeasible, 10);  // the budgets reach both sides
  EXPECT_GT(feasible, 200);
}

struct Layer {
  platforms::Cluster cluster;
  workloads::ModelGraph model;
  ShardingGraph graph;
};

Layer layer(const char* workload, int micro_batch) {
  Layer l{platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml")),
          workloads::load_workload_file(src("workloads/presets/") + workload + ".yaml"),
          {}};
  l.graph = layer_graph({&l.model, &l.cluster, {0, 1, 2, 3, 4, 5, 6, 7}, micro_batch, "ring"});
  return l;
}

Choice reference(const ShardingGraph& g, int Node::*which) {
  Choice c;
  for (const Node& n : g.nodes) c.push_back(n.*which);
  return c;
}

// GPT-3 13B (h 5120) with one 2048-token sequence over 8 NVLink GPUs: replicated weights
// would all-reduce 12h^2 x 2 B = 629 MB of gradients per layer against Megatron's four
// all-reduces of s h x 2 B = 21 MB each. Sequence parallelism moves the same bytes (a ring
// all-reduce is a reduce-scatter and an all-gather) and splits the norms and dropouts: it
// is Megatron's best, and the ILP must find it or something faster.
TEST(IntraOpLayer, GptLayerOnADgxA100FindsMegatronWithSequenceParallelism) {
  const Layer l = layer("gpt3-13b", 1);
  const Solution ilp = solve_ilp(l.graph, kNoBudget), brute = brute_force(l.graph, kNoBudget);
  ASSERT_TRUE(ilp.feasible);
  EXPECT_NEAR(ilp.cost_s, brute.cost_s, 1e-12);
  const Choice megatron = reference(l.graph, &Node::megatron), sp = reference(l.graph, &Node::megatron_sp);
  EXPECT_LT(cost_s(l.graph, sp), cost_s(l.graph, megatron));
  EXPECT_LE(ilp.cost_s, cost_s(l.graph, sp) * (1 + 1e-12));
  EXPECT_EQ(ilp.choice, sp);
}

// BERT-large (h 1024) with 32 sequences of 512 tokens: a layer's weight gradients are
// 12.6M x 2 B = 25 MB, Megatron's four activations all-reduced 32 x 512 x 1024 x 2 B =
// 34 MB each: every operator on its share of the tokens wins.
TEST(IntraOpLayer, DataParallelWinsWhenActivationsOutweighWeights) {
  const Layer l = layer("bert-large", 32);
  const Solution ilp = solve_ilp(l.graph, kNoBudget);
  ASSERT_TRUE(ilp.feasible);
  EXPECT_EQ(ilp.choice, reference(l.graph, &Node::data));
  // Under a budget below data parallelism's memory, the weights stay split somewhere.
  const double budget =
      0.5 * (memory_bytes(l.graph, ilp.choice) + memory_bytes(l.graph, reference(l.graph, &Node::megatron_sp)));
  const Solution tight = solve_ilp(l.graph, budget), brute = brute_force(l.graph, budget);
  ASSERT_TRUE(tight.feasible);
  EXPECT_LE(tight.memory_bytes, budget);
  EXPECT_GT(tight.cost_s, ilp.cost_s);
  EXPECT_NEAR(tight.cost_s, brute.cost_s, 1e-12);
}

// An fp8 layer's GEMMs take the mesh's scaling recipe (`dejavu shard --fp8-recipe`): without
// one, Transformer Engine's default for the GPU (MXFP8 on a B200, delayed scaling on an H100).
// Delayed scaling's casts are the cheapest Transformer Engine timed (0.896 of HBM on a B300
// against current scaling's 0.376): every GEMM strategy costs less under it, every other
// operator the same.
TEST(IntraOpLayer, Fp8GemmsTakeTheMeshsScalingRecipe) {
  const auto model = workloads::load_workload_file(src("workloads/presets/llama3-8b-fp8.yaml"));
  const std::vector<int> mesh = {0, 1, 2, 3, 4, 5, 6, 7};
  auto graph = [&](const platforms::Cluster& c, sim::Fp8Recipe r) {
    return layer_graph({&model, &c, mesh, 1, "ring", r});
  };
  const auto b200 = platforms::load_cluster_file(src("platforms/presets/dgx-b200-1x8.yaml"));
  const auto h100 = platforms::load_cluster_file(src("platforms/presets/dgx-h100-1x8.yaml"));
  const ShardingGraph by_default = graph(b200, sim::Fp8Recipe::Default), mx = graph(b200, sim::Fp8Recipe::Mxfp8),
                      delayed = graph(b200, sim::Fp8Recipe::Delayed),
                      tensorwise = graph(b200, sim::Fp8Recipe::Tensorwise);
  const ShardingGraph h100_default = graph(h100, sim::Fp8Recipe::Default),
                      h100_delayed = graph(h100, sim::Fp8Recipe::Delayed);
  int gemm_strategies = 0;
  for (size_t n = 0; n < by_default.nodes.size(); ++n)
    for (size_t s = 0; s < by_default.nodes[n].strategies.size(); ++s) {
      const double d = delayed.nodes[n].strategies[s].compute_s, t = tensorwise.nodes[n].strategies[s].compute_s;
      EXPECT_EQ(by_default.nodes[n].strategies[s].compute_s, mx.nodes[n].strategies[s].compute_s);
      EXPECT_EQ(h100_default.nodes[n].strategies[s].compute_s, h100_delayed.nodes[n].strategies[s].compute_s);
      const bool gemm = by_default.nodes[n].strategies[s].name == "columns";  // a split only GEMMs have
      gemm_strategies += gemm;
      if (gemm) {
        EXPECT_LT(d, t) << by_default.nodes[n].name;
      }
      if (by_default.nodes[n].name.find("norm") != std::string::npos) {
        EXPECT_EQ(d, t) << by_default.nodes[n].name;
      }
    }
  EXPECT_GE(gemm_strategies, 4);  // the QKV, output, up and down projections at least
}

TEST(IntraOpLayer, RefusesExpertsAndEmptyMeshes) {
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  const auto moe = workloads::load_workload_file(src("workloads/presets/mixtral-8x7b.yaml"));
  EXPECT_THROW(layer_graph({&moe, &cluster, {0, 1}, 1, "ring"}), ModelError);
  const auto gpt = workloads::load_workload_file(src("workloads/presets/gpt3-1.3b.yaml"));
  EXPECT_THROW(layer_graph({&gpt, &cluster, {}, 1, "ring"}), ModelError);
}

}  // namespace
}  // namespace dejavu::strategies::intra_op
