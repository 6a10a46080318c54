#include <algorithm>
#include <memory>

#include "strategies/training/aggregators/aggregator.h"

namespace dejavu::strategies::convergence {

// One factory per file in this folder.
std::unique_ptr<Aggregator> make_mean();
std::unique_ptr<Aggregator> make_median();
std::unique_ptr<Aggregator> make_trimmed_mean();
std::unique_ptr<Aggregator> make_krum();
std::unique_ptr<Aggregator> make_zeno();

Registry<Aggregator>& aggregators() {
  static Registry<Aggregator> registry("aggregator");
  return registry;
}

void register_aggregators() {
  auto& r = aggregators();
  r.add("mean", "the average of every gradient", make_mean);
  r.add("median", "coordinate-wise median (Yin et al. 2018)", make_median);
  r.add("trimmed", "coordinate-wise mean without the `trim` largest and smallest (Yin et al. 2018)", make_trimmed_mean);
  r.add("krum", "the gradient closest to its m - b - 2 nearest others (Blanchard et al. 2017)", make_krum);
  r.add("zeno", "the average of the m - b gradients that lower a validation loss most (Xie et al. 2019)", make_zeno);
}

Eigen::VectorXd coordinate_wise(const std::vector<Eigen::VectorXd>& gs,
                                const std::function<double(const std::vector<double>&)>& reduce) {
  const size_t m = gs.size();
  Eigen::VectorXd out(gs[0].size());
  std::vector<double> column(m);
  for (int i = 0; i < out.size(); ++i) {
    for (size_t k = 0; k < m; ++k) column[k] = gs[k][i];
    std::sort(column.begin(), column.end());
    out[i] = reduce(column);
  }
  return out;
}

}  // namespace dejavu::strategies::convergence
