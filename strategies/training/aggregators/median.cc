// The coordinate-wise median (Yin et al. 2018): robust to fewer than half bad workers.
#include <memory>

#include "strategies/training/aggregators/aggregator.h"

namespace dejavu::strategies::convergence {

namespace {

class Median : public Aggregator {
 public:
  Eigen::VectorXd combine(const std::vector<Eigen::VectorXd>& gs, const AggregationContext&) const override {
    return coordinate_wise(gs, [](const std::vector<double>& col) {
      const size_t m = col.size();
      return m % 2 ? col[m / 2] : (col[m / 2 - 1] + col[m / 2]) / 2;
    });
  }
};

}  // namespace

std::unique_ptr<Aggregator> make_median() { return std::make_unique<Median>(); }

}  // namespace dejavu::strategies::convergence
