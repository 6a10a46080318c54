// Gradient compression: what a data-parallel replica puts on the wire instead of its dense
// gradient. One interface serves both halves of the simulator: the step-time model prices
// the wire bytes and the encode/decode kernel (the lowering's gradient pass), and the
// convergence model applies the real operator to real gradients (strategies/training).
// Each method is one file in this folder, registered in compressors.cc; plans name it as
// `data_parallel: {compression: <name>}`.
#pragma once

#include <Eigen/Dense>
#include <utility>
#include <vector>

#include "sim/kernel.h"
#include "sim/random.h"
#include "sim/registry.h"

namespace dejavu::strategies {

struct CompressionParams {
  double density = 0.01;  // top-k: the fraction of elements kept
  int rank = 4;           // PowerSGD: the factors' rank
};

// The price of compressing one GPU's gradient.
struct Compression {
  double wire_bytes = 0;  // per GPU
  sim::Kernel kernel;     // compress + decompress work per GPU
  bool sparse = false;    // payloads differ per replica (top-k indices): gather, don't reduce
};

// A column-major matrix inside a flat gradient vector (PowerSGD factors those).
struct GradientMatrix {
  int offset, rows, cols;
};

class Compressor {
 public:
  virtual ~Compressor() = default;
  // True when the sender keeps what compression dropped and adds it to its next gradient.
  virtual bool error_feedback() const = 0;
  // Wire bytes and kernel for `bytes` of gradient in `dtype`; `matrices`: the GPU's weight
  // matrices as (rows, columns).
  virtual Compression price(const CompressionParams& params, double bytes, sim::DType dtype,
                            const std::vector<std::pair<double, double>>& matrices) const = 0;
  // What the others receive for the gradient `v` (error feedback already added). An
  // instance serves one worker and may keep state between steps (PowerSGD's warm start).
  virtual Eigen::VectorXd apply(const CompressionParams& params, const Eigen::VectorXd& v,
                                const std::vector<GradientMatrix>& matrices, sim::Rng& rng) = 0;
};

Registry<Compressor>& compressors();
void register_compressors();  // called by strategies::register_builtins()

// The price of no compression: the dense gradient, no kernel.
Compression dense_price(double bytes, sim::DType dtype);

}  // namespace dejavu::strategies
