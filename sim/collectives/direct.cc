// Direct: every host sends to every other at once. All-to-all, reduce-scatter and
// all-gather in one step of S/n per pair; all-reduce as reduce-scatter then all-gather;
// broadcast and reduce as the root sending to (receiving from) all, S each.
#include "sim/collectives/algorithms.h"

namespace dejavu::sim {

namespace {

class Direct : public CollectiveAlgorithm {
 public:
  std::string name() const override { return "direct"; }
  bool supports(const Network&, const std::vector<int>&, CollectiveOp) const override { return true; }

  CommSchedule schedule(const Network&, const std::vector<int>& g, CollectiveOp op, double S) const override {
    const int n = static_cast<int>(g.size());
    CommSchedule s;
    if (n <= 1) return s;
    auto all_pairs = [&](double bytes) {
      std::vector<Transfer> step;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (i != j) step.push_back({g[i], g[j], bytes});
      return step;
    };
    switch (op) {
      case CollectiveOp::AllReduce:
        s.add_step(2) = all_pairs(S / n);
        break;
      case CollectiveOp::ReduceScatter:
      case CollectiveOp::AllGather:
      case CollectiveOp::AllToAll:
        s.add_step() = all_pairs(S / n);
        break;
      case CollectiveOp::SendRecv: {
        auto& step = s.add_step();
        for (int i = 0; i < n; ++i) step.push_back({g[i], g[(i + 1) % n], S});
        break;
      }
      case CollectiveOp::Broadcast:
      case CollectiveOp::Reduce: {
        auto& step = s.add_step();
        for (int j = 1; j < n; ++j)
          step.push_back(op == CollectiveOp::Broadcast ? Transfer{g[0], g[j], S} : Transfer{g[j], g[0], S});
        break;
      }
    }
    return s;
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_direct() { return std::make_unique<Direct>(); }

}  // namespace dejavu::sim
