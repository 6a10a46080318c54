// Recursive halving-doubling (Thakur et al. 2005), for a power-of-two group. Reduce-scatter
// halves: at step k host i exchanges S/2^(k+1) with i xor n/2^(k+1); all-gather doubles:
// at step k host i exchanges S·2^k/n with i xor 2^k; all-reduce is one then the other,
// 2·log2(n) steps in all. Broadcast and reduce run a binomial tree of log2(n) steps of S.
#include "sim/collectives/algorithms.h"

namespace dejavu::sim {

namespace {

class HalvingDoubling : public CollectiveAlgorithm {
 public:
  std::string name() const override { return "halving-doubling"; }

  bool supports(const Network&, const std::vector<int>& g, CollectiveOp op) const override {
    const size_t n = g.size();
    return op != CollectiveOp::AllToAll && op != CollectiveOp::SendRecv && n > 0 && (n & (n - 1)) == 0;
  }

  CommSchedule schedule(const Network& net, const std::vector<int>& g, CollectiveOp op, double S) const override {
    if (!supports(net, g, op)) unsupported(name(), op, g.size(), "needs a power-of-two group and no all_to_all");
    const int n = static_cast<int>(g.size());
    int L = 0;
    while ((1 << L) < n) ++L;
    CommSchedule s;
    auto exchange = [&](int distance, double bytes) {
      auto& step = s.add_step();
      for (int i = 0; i < n; ++i) step.push_back({g[i], g[i ^ distance], bytes});
    };
    auto halving = [&] {
      for (int k = 0; k < L; ++k) exchange(n >> (k + 1), S / (1 << (k + 1)));
    };
    auto doubling = [&] {
      for (int k = 0; k < L; ++k) exchange(1 << k, S * (1 << k) / n);
    };
    switch (op) {
      case CollectiveOp::AllReduce:
        halving();
        doubling();
        break;
      case CollectiveOp::ReduceScatter:
        halving();
        break;
      case CollectiveOp::AllGather:
        doubling();
        break;
      case CollectiveOp::Broadcast:
        for (int k = 0; k < L; ++k) {
          auto& step = s.add_step();
          for (int i = 0; i < (1 << k); ++i) step.push_back({g[i], g[i + (1 << k)], S});
        }
        break;
      case CollectiveOp::Reduce:
        for (int k = L - 1; k >= 0; --k) {
          auto& step = s.add_step();
          for (int i = 0; i < (1 << k); ++i) step.push_back({g[i + (1 << k)], g[i], S});
        }
        break;
      case CollectiveOp::AllToAll:
      case CollectiveOp::SendRecv:
        break;
    }
    return s;
  }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_halving_doubling() { return std::make_unique<HalvingDoubling>(); }

}  // namespace dejavu::sim
