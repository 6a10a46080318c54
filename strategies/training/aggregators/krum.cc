// Krum (Blanchard et al. 2017): the one gradient whose m - b - 2 nearest others are
// closest (sum of squared distances).
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "strategies/training/aggregators/aggregator.h"

namespace dejavu::strategies::convergence {

namespace {

class Krum : public Aggregator {
 public:
  std::string check(int n, int b) const override {
    if (n > 2 * b + 2) return "";
    return "Krum needs more than 2b + 2 workers; with " + std::to_string(n) + ", b is at most " +
           std::to_string((n - 3) / 2);
  }
  Eigen::VectorXd combine(const std::vector<Eigen::VectorXd>& gs, const AggregationContext& ctx) const override {
    const int m = static_cast<int>(gs.size());
    const int near = std::max(1, m - ctx.trim - 2);
    double best = INFINITY;
    int pick = 0;
    for (int i = 0; i < m; ++i) {
      std::vector<double> d;
      for (int k = 0; k < m; ++k)
        if (k != i) d.push_back((gs[i] - gs[k]).squaredNorm());
      std::sort(d.begin(), d.end());
      const double score = std::accumulate(d.begin(), d.begin() + std::min<int>(near, d.size()), 0.0);
      if (score < best) best = score, pick = i;
    }
    return gs[pick];
  }
};

}  // namespace

std::unique_ptr<Aggregator> make_krum() { return std::make_unique<Krum>(); }

}  // namespace dejavu::strategies::convergence
