// Zeno (Xie et al. 2019): each gradient scored by the loss decrease a step along it gives on
// a small validation batch, less a penalty on its size; the b worst dropped, the rest averaged.
#include <algorithm>
#include <functional>
#include <memory>

#include "strategies/training/aggregators/aggregator.h"

namespace dejavu::strategies::convergence {

namespace {

class Zeno : public Aggregator {
 public:
  std::string check(int n, int b) const override {
    if (b < n) return "";
    return std::to_string(b) + " suspects among " + std::to_string(n) + " workers; valid: 0 to " +
           std::to_string(n - 1);
  }
  Eigen::VectorXd combine(const std::vector<Eigen::VectorXd>& gs, const AggregationContext& ctx) const override {
    const int m = static_cast<int>(gs.size()), b = ctx.trim;
    const double lr = ctx.learning_rate, base = ctx.probe_loss(ctx.weights);
    std::vector<std::pair<double, int>> score;
    for (int i = 0; i < m; ++i) {
      const Eigen::VectorXd q = ctx.weights - lr * gs[i];
      score.push_back({base - ctx.probe_loss(q) - 1e-4 * lr * gs[i].squaredNorm(), i});
    }
    std::sort(score.begin(), score.end(), std::greater<>());
    Eigen::VectorXd s = Eigen::VectorXd::Zero(gs[0].size());
    for (int k = 0; k < m - b; ++k) s += gs[score[k].second];
    return s / (m - b);
  }
};

}  // namespace

std::unique_ptr<Aggregator> make_zeno() { return std::make_unique<Zeno>(); }

}  // namespace dejavu::strategies::convergence
