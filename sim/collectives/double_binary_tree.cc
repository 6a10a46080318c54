// Double binary tree (as in NCCL 2.4): two binary trees over the group, the second the
// mirror image of the first, so most hosts are inner nodes in one and leaves in the other;
// each carries half the buffer, cut into c chunks and pipelined. All-reduce reduces up
// both trees (D + c - 1 steps for depth D: a host at depth d sends chunk j to its parent at
// step j + D - d) and then broadcasts down (another D + c - 1 steps: a parent at depth d
// sends chunk j to its children at step j + d). Broadcast and reduce use the first tree
// alone with the whole buffer.
#include <algorithm>

#include "sim/collectives/algorithms.h"

namespace dejavu::sim {

namespace {

int depth_of(int i) {  // heap order: the root is 0, the children of i are 2i+1 and 2i+2
  int d = 0;
  while (i > 0) {
    i = (i - 1) / 2;
    ++d;
  }
  return d;
}

class DoubleBinaryTree : public CollectiveAlgorithm {
 public:
  std::string name() const override { return "tree"; }

  bool supports(const Network&, const std::vector<int>&, CollectiveOp op) const override {
    return op == CollectiveOp::AllReduce || op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce;
  }

  CommSchedule schedule(const Network& net, const std::vector<int>& g, CollectiveOp op, double S) const override {
    if (!supports(net, g, op)) unsupported(name(), op, g.size(), "trees run all_reduce, broadcast, reduce");
    const int n = static_cast<int>(g.size());
    CommSchedule s;
    if (n <= 1) return s;
    const int D = depth_of(n - 1);
    const bool both = op == CollectiveOp::AllReduce;
    const double part = both ? S / 2 : S;
    const int c = pipeline_chunks(part);
    const int phase = D + c - 1;
    // tree 0 over positions as they are; tree 1 over the mirrored positions
    auto host = [&](int tree, int pos) { return g[tree == 0 ? pos : n - 1 - pos]; };
    const int trees = both ? 2 : 1;
    const bool up = op != CollectiveOp::Broadcast;
    const bool down = op != CollectiveOp::Reduce;
    if (up) {
      for (int k = 0; k < phase; ++k) {
        auto& step = s.add_step();
        for (int t = 0; t < trees; ++t)
          for (int i = 1; i < n; ++i) {
            const int chunk = k - (D - depth_of(i));
            if (chunk >= 0 && chunk < c) step.push_back({host(t, i), host(t, (i - 1) / 2), part / c});
          }
      }
    }
    if (down) {
      for (int k = 0; k < phase; ++k) {
        auto& step = s.add_step();
        for (int t = 0; t < trees; ++t)
          for (int i = 1; i < n; ++i) {
            const int parent = (i - 1) / 2;
            const int chunk = k - depth_of(parent);
            if (chunk >= 0 && chunk < c) step.push_back({host(t, parent), host(t, i), part / c});
          }
      }
    }
    s.steps.erase(std::remove_if(s.steps.begin(), s.steps.end(), [](const auto& st) { return st.transfers.empty(); }),
                  s.steps.end());
    return s;
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_double_binary_tree() { return std::make_unique<DoubleBinaryTree>(); }

}  // namespace dejavu::sim
