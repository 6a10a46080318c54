// 1-bit SGD (Seide et al. 2014): each element's sign, scaled by the mean magnitude, with the
// quantisation error fed back into the next step.
#include <memory>

#include "strategies/compression/compressor.h"

namespace dejavu::strategies {

namespace {

class OneBit : public Compressor {
 public:
  bool error_feedback() const override { return true; }
  Compression price(const CompressionParams&, double bytes, sim::DType dtype,
                    const std::vector<std::pair<double, double>>&) const override {
    Compression out = dense_price(bytes, dtype);
    out.wire_bytes = bytes / sim::dtype_bytes(dtype) / 8;
    out.kernel.bytes = 4 * bytes;
    return out;
  }
  Eigen::VectorXd apply(const CompressionParams&, const Eigen::VectorXd& v, const std::vector<GradientMatrix>&,
                        sim::Rng&) override {
    const double scale = v.cwiseAbs().mean();
    Eigen::VectorXd out(v.size());
    for (int i = 0; i < v.size(); ++i) out[i] = v[i] >= 0 ? scale : -scale;
    return out;
  }
};

}  // namespace

std::unique_ptr<Compressor> make_one_bit() { return std::make_unique<OneBit>(); }

}  // namespace dejavu::strategies
