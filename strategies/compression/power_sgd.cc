// PowerSGD (Vogels et al. 2019): each weight matrix M (rows x cols) travels as rank-r
// factors P = orth(M·Q) and Q = Mᵀ·P, Q warm-started from the previous step; vectors
// travel whole; what the factors miss is fed back.
#include <algorithm>
#include <memory>

#include "strategies/compression/compressor.h"

namespace dejavu::strategies {

namespace {

class PowerSgd : public Compressor {
 public:
  bool error_feedback() const override { return true; }
  Compression price(const CompressionParams& p, double bytes, sim::DType dtype,
                    const std::vector<std::pair<double, double>>& matrices) const override {
    const double e = sim::dtype_bytes(dtype);
    double dense = 0, factors = 0, flops = 0;
    for (const auto& [rows, cols] : matrices) {
      dense += rows * cols * e;
      factors += p.rank * (rows + cols) * e;
      flops += 4 * p.rank * rows * cols;  // P = M·Q and Q = Mᵀ·P
    }
    Compression out;
    out.wire_bytes = std::max(0.0, bytes - dense) + factors;
    out.kernel = {sim::OpClass::Gemm, flops, 2 * dense, dtype};
    return out;
  }
  Eigen::VectorXd apply(const CompressionParams& p, const Eigen::VectorXd& v,
                        const std::vector<GradientMatrix>& matrices, sim::Rng& rng) override {
    Eigen::VectorXd out = v;
    if (q_.empty()) q_.resize(matrices.size());
    for (size_t i = 0; i < matrices.size(); ++i) {
      const GradientMatrix& b = matrices[i];
      if (b.cols == 1) continue;  // vectors travel whole
      const int r = std::min({p.rank, b.rows, b.cols});
      Eigen::Map<const Eigen::MatrixXd> M(v.data() + b.offset, b.rows, b.cols);
      Eigen::MatrixXd& Q = q_[i];
      if (Q.rows() != b.cols) {
        Q.resize(b.cols, r);
        for (int k = 0; k < Q.size(); ++k) Q.data()[k] = sim::gaussian(rng);
      }
      Eigen::MatrixXd P = M * Q;
      Eigen::HouseholderQR<Eigen::MatrixXd> qr(P);
      P = qr.householderQ() * Eigen::MatrixXd::Identity(b.rows, r);
      Q = M.transpose() * P;  // the warm start for the next step
      Eigen::Map<Eigen::MatrixXd>(out.data() + b.offset, b.rows, b.cols) = P * Q.transpose();
    }
    return out;
  }

 private:
  std::vector<Eigen::MatrixXd> q_;  // per matrix
};

}  // namespace

std::unique_ptr<Compressor> make_power_sgd() { return std::make_unique<PowerSgd>(); }

}  // namespace dejavu::strategies
