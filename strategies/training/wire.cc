#include "strategies/training/wire.h"

#include <algorithm>

namespace dejavu::strategies::convergence {

Wire::Wire(const ConvergenceConfig& c, const Model& m, int workers)
    : c_(c), m_(m), params_{c.density, c.rank}, error_(workers, VectorXd::Zero(m.size())) {
  for (int w = 0; w < workers; ++w) compressors_.push_back(compressors().make(c.compression));
}

VectorXd Wire::send(int w, const VectorXd& g, Rng& rng) {
  Compressor& z = *compressors_[w];
  VectorXd v = g;
  if (z.error_feedback()) v += error_[w];
  VectorXd out = z.apply(params_, v, m_.blocks(), rng);
  if (z.error_feedback()) error_[w] = v - out;
  for (const ByzantineWorker& b : c_.byzantine)
    if (b.gpu == w) out = corrupt(b, out, rng);
  return out;
}

VectorXd Wire::corrupt(const ByzantineWorker& b, const VectorXd& out, Rng& rng) const {
  if (b.mode == "random") {  // noise ten times the gradient's norm
    const double norm = std::max(out.norm(), 1e-12);
    VectorXd noise(out.size());
    for (int i = 0; i < noise.size(); ++i) noise[i] = gaussian(rng);
    return noise * (10 * norm / noise.norm());
  }
  return out * (b.mode == "sign_flip" ? -std::fabs(b.factor) : b.factor);  // flipped (x|factor|) or scaled
}

}  // namespace dejavu::strategies::convergence
