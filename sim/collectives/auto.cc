// auto: the algorithm with the lowest closed-form time for this op, size and group among
// those that support it (ties to the first by name), as NCCL's tuner picks from its cost
// model. resolve() says which one it picked.
#include <limits>

#include "sim/collectives/algorithms.h"

namespace dejavu::sim {

namespace {

class Auto : public CollectiveAlgorithm {
 public:
  Auto() {
    for (auto make :
         {make_direct, make_halving_doubling, make_hierarchical, make_nvls, make_ring, make_double_binary_tree})
      candidates_.push_back(make());
  }
  std::string name() const override { return "auto"; }

  bool supports(const Network& net, const std::vector<int>& g, CollectiveOp op) const override {
    for (const auto& c : candidates_)
      if (c->supports(net, g, op)) return true;
    return false;
  }

  const CollectiveAlgorithm& resolve(const Network& net, const std::vector<int>& g, CollectiveOp op,
                                     double S) const override {
    const CollectiveAlgorithm* best = nullptr;
    double best_time = std::numeric_limits<double>::infinity();
    for (const auto& c : candidates_) {
      if (!c->supports(net, g, op)) continue;
      const double t = c->time_s(net, g, op, S);
      if (t < best_time) {
        best_time = t;
        best = c.get();
      }
    }
    if (!best) unsupported(name(), op, g.size(), "no algorithm supports it");
    return *best;
  }

  CommSchedule schedule(const Network& net, const std::vector<int>& g, CollectiveOp op, double S) const override {
    return resolve(net, g, op, S).schedule(net, g, op, S);
  }
  double time_s(const Network& net, const std::vector<int>& g, CollectiveOp op, double S) const override {
    return g.size() <= 1 ? 0 : resolve(net, g, op, S).time_s(net, g, op, S);
  }

 private:
  std::vector<std::unique_ptr<CollectiveAlgorithm>> candidates_;  // in name order
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_auto() { return std::make_unique<Auto>(); }

}  // namespace dejavu::sim
