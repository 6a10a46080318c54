// Top-k sparsification: the `density` fraction of largest-magnitude elements, sent as values
// and 32-bit indices; the rest stays in the sender's error-feedback residual.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "strategies/compression/compressor.h"

namespace dejavu::strategies {

namespace {

class TopK : public Compressor {
 public:
  bool error_feedback() const override { return true; }
  Compression price(const CompressionParams& p, double bytes, sim::DType dtype,
                    const std::vector<std::pair<double, double>>&) const override {
    const double e = sim::dtype_bytes(dtype);
    Compression out = dense_price(bytes, dtype);
    out.wire_bytes = p.density * (bytes / e) * (e + 4);
    out.kernel.bytes = 4 * bytes;  // read, select, scatter back on the receiver
    out.sparse = true;
    return out;
  }
  Eigen::VectorXd apply(const CompressionParams& p, const Eigen::VectorXd& v, const std::vector<GradientMatrix>&,
                        sim::Rng&) override {
    const int k = std::max(1, static_cast<int>(std::lround(p.density * v.size())));
    std::vector<int> idx(v.size());
    std::iota(idx.begin(), idx.end(), 0);
    // Largest magnitude first; ties to the lower index, so the choice is deterministic.
    std::nth_element(idx.begin(), idx.begin() + (k - 1), idx.end(), [&](int a, int b) {
      return std::fabs(v[a]) > std::fabs(v[b]) || (std::fabs(v[a]) == std::fabs(v[b]) && a < b);
    });
    Eigen::VectorXd out = Eigen::VectorXd::Zero(v.size());
    for (int i = 0; i < k; ++i) out[idx[i]] = v[idx[i]];
    return out;
  }
};

}  // namespace

std::unique_ptr<Compressor> make_top_k() { return std::make_unique<TopK>(); }

}  // namespace dejavu::strategies
