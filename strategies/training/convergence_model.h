// The training half of the convergence model, shared by train_to_target and the tests that
// replay a run by hand (plain and large-batch SGD): seeded synthetic data, the two small
// models and the random streams every run draws from.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "sim/random.h"
#include "strategies/compression/compressor.h"
#include "strategies/training/convergence.h"

namespace dejavu::strategies::convergence {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using sim::below;
using sim::gaussian;
using sim::Rng;
using sim::uniform;

// Worker w's minibatch stream, and the stream of the k-th starting weights (k = 0: the
// run's; others: independent or candidate initialisations), for a run's seed.
inline Rng worker_stream(unsigned long long seed, int w) { return Rng(seed * 1000003ULL + w + 1); }
inline Rng init_stream(unsigned long long seed, int k = 0) {
  return Rng(seed * 0x9E3779B97F4A7C15ULL + 0x5EED + 7919ULL * k);
}
// `batch` rows drawn with replacement from `rows` samples.
inline std::vector<int> minibatch(Rng& r, size_t rows, int batch) {
  std::vector<int> out(batch);
  for (int& x : out) x = static_cast<int>(below(r, rows));
  return out;
}

struct Data {
  std::vector<MatrixXd> x;          // per worker: samples x dim
  std::vector<std::vector<int>> y;  // per worker
  MatrixXd vx;                      // validation (drawn like the training samples)
  std::vector<int> vy;
};

Data make_data(const ConvergenceData& d, int workers);

// A flat parameter vector; matrices are column-major blocks (PowerSGD compresses those).
using Block = GradientMatrix;

// Multinomial logistic regression or a two-layer ReLU MLP, with cross-entropy loss.
class Model {
 public:
  Model(const std::string& kind, int dim, int classes, int hidden);
  int size() const { return size_; }
  const std::vector<Block>& blocks() const { return blocks_; }
  VectorXd init(Rng& rng) const;
  // Mean cross-entropy over rows of x, its gradient into *grad (if given), accuracy into *acc.
  double loss(const VectorXd& p, const MatrixXd& x, const std::vector<int>& y, const std::vector<int>& rows,
              VectorXd* grad, double* acc = nullptr) const;

 private:
  std::string kind_;
  int d_, c_, h_;
  std::vector<Block> blocks_;
  int size_ = 0;
};

}  // namespace dejavu::strategies::convergence
