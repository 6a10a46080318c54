// The coordinate-wise trimmed mean (Yin et al. 2018): each coordinate's b largest and b
// smallest values dropped, the rest averaged.
#include <memory>

#include "strategies/training/aggregators/aggregator.h"

namespace dejavu::strategies::convergence {

namespace {

class TrimmedMean : public Aggregator {
 public:
  std::string check(int n, int b) const override {
    if (2 * b < n) return "";
    return std::to_string(b) + " dropped from each end of " + std::to_string(n) + " workers; valid: 0 to " +
           std::to_string((n - 1) / 2);
  }
  Eigen::VectorXd combine(const std::vector<Eigen::VectorXd>& gs, const AggregationContext& ctx) const override {
    const int b = ctx.trim;
    return coordinate_wise(gs, [b](const std::vector<double>& col) {
      const int m = static_cast<int>(col.size());
      double s = 0;
      for (int k = b; k < m - b; ++k) s += col[k];
      return s / (m - 2 * b);
    });
  }
};

}  // namespace

std::unique_ptr<Aggregator> make_trimmed_mean() { return std::make_unique<TrimmedMean>(); }

}  // namespace dejavu::strategies::convergence
