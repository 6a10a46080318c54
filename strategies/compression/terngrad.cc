// TernGrad (Wen et al. 2017): each element becomes -s, 0 or +s (s the largest magnitude),
// +-s with probability |v|/s, so the result is unbiased; two bits an element on the wire.
#include <cmath>
#include <memory>

#include "strategies/compression/compressor.h"

namespace dejavu::strategies {

namespace {

class TernGrad : public Compressor {
 public:
  bool error_feedback() const override { return false; }
  Compression price(const CompressionParams&, double bytes, sim::DType dtype,
                    const std::vector<std::pair<double, double>>&) const override {
    Compression out = dense_price(bytes, dtype);
    out.wire_bytes = bytes / sim::dtype_bytes(dtype) / 4;
    out.kernel.bytes = 3 * bytes;
    return out;
  }
  Eigen::VectorXd apply(const CompressionParams&, const Eigen::VectorXd& v, const std::vector<GradientMatrix>&,
                        sim::Rng& rng) override {
    const double s = v.cwiseAbs().maxCoeff();
    Eigen::VectorXd out(v.size());
    for (int i = 0; i < v.size(); ++i)
      out[i] = s > 0 && sim::uniform(rng) < std::fabs(v[i]) / s ? (v[i] >= 0 ? s : -s) : 0.0;
    return out;
  }
};

}  // namespace

std::unique_ptr<Compressor> make_terngrad() { return std::make_unique<TernGrad>(); }

}  // namespace dejavu::strategies
