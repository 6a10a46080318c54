// A worker's gradient on the wire: compressed by the plan's compressor (with its
// error-feedback memory) and, for a Byzantine worker, corrupted.
#pragma once

#include <memory>
#include <vector>

#include "strategies/compression/compressor.h"
#include "strategies/training/convergence_model.h"

namespace dejavu::strategies::convergence {

class Wire {
 public:
  Wire(const ConvergenceConfig& config, const Model& model, int workers);
  // What the others receive for worker w's gradient g; draws on the worker's stream.
  VectorXd send(int w, const VectorXd& g, Rng& rng);

 private:
  VectorXd corrupt(const ByzantineWorker& b, const VectorXd& out, Rng& rng) const;

  const ConvergenceConfig& c_;
  const Model& m_;
  CompressionParams params_;
  std::vector<std::unique_ptr<Compressor>> compressors_;  // one per worker: its own state
  std::vector<VectorXd> error_;                           // error feedback, per worker
};

}  // namespace dejavu::strategies::convergence
