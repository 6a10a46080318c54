// The plain average: what all-reduce computes.
#include <memory>

#include "strategies/training/aggregators/aggregator.h"

namespace dejavu::strategies::convergence {

namespace {

class Mean : public Aggregator {
 public:
  Eigen::VectorXd combine(const std::vector<Eigen::VectorXd>& gs, const AggregationContext&) const override {
    Eigen::VectorXd s = Eigen::VectorXd::Zero(gs[0].size());
    for (const auto& g : gs) s += g;
    return s / static_cast<double>(gs.size());
  }
};

}  // namespace

std::unique_ptr<Aggregator> make_mean() { return std::make_unique<Mean>(); }

}  // namespace dejavu::strategies::convergence
