// No compression: the dense gradient travels as it is.
#include <memory>

#include "strategies/compression/compressor.h"

namespace dejavu::strategies {

namespace {

class NoCompression : public Compressor {
 public:
  bool error_feedback() const override { return false; }
  Compression price(const CompressionParams&, double bytes, sim::DType dtype,
                    const std::vector<std::pair<double, double>>&) const override {
    return dense_price(bytes, dtype);
  }
  Eigen::VectorXd apply(const CompressionParams&, const Eigen::VectorXd& v, const std::vector<GradientMatrix>&,
                        sim::Rng&) override {
    return v;
  }
};

}  // namespace

std::unique_ptr<Compressor> make_no_compression() { return std::make_unique<NoCompression>(); }

}  // namespace dejavu::strategies
