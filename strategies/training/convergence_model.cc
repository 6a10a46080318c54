#include "strategies/training/convergence_model.h"

#include <algorithm>

namespace dejavu::strategies::convergence {

Data make_data(const ConvergenceData& d, int workers) {
  Rng rng(d.seed);
  MatrixXd means(d.classes, d.dim);
  // Two class means lie about `separation` noise deviations apart.
  const double scale = d.separation / std::sqrt(2.0 * d.dim);
  for (int c = 0; c < d.classes; ++c)
    for (int k = 0; k < d.dim; ++k) means(c, k) = scale * gaussian(rng);
  // Class imbalance: class c's share falls geometrically, the first class `imbalance` times
  // as common as the last (the long-tailed split of Cui et al. 2019). 1: balanced.
  std::vector<double> cumulative(d.classes);
  double total = 0;
  for (int c = 0; c < d.classes; ++c)
    cumulative[c] = total += std::pow(d.imbalance, -static_cast<double>(c) / (d.classes - 1));
  auto label = [&]() {
    if (d.imbalance == 1) return static_cast<int>(below(rng, d.classes));
    const double u = uniform(rng) * total;
    return static_cast<int>(std::upper_bound(cumulative.begin(), cumulative.end() - 1, u) - cumulative.begin());
  };
  auto sample = [&](int y, MatrixXd& x, int row) {
    for (int k = 0; k < d.dim; ++k) x(row, k) = means(y, k) + gaussian(rng);
  };
  Data out;
  for (int w = 0; w < workers; ++w) {
    MatrixXd x(d.samples_per_worker, d.dim);
    std::vector<int> y(d.samples_per_worker);
    for (int i = 0; i < d.samples_per_worker; ++i) {
      // Skew: this share of a worker's samples come from its home class.
      y[i] = uniform(rng) < d.skew ? w % d.classes : label();
      sample(y[i], x, i);
    }
    out.x.push_back(x);
    out.y.push_back(y);
  }
  const int n = 2000;
  out.vx.resize(n, d.dim);
  out.vy.resize(n);
  for (int i = 0; i < n; ++i) {
    out.vy[i] = label();
    sample(out.vy[i], out.vx, i);
  }
  return out;
}

Model::Model(const std::string& kind, int dim, int classes, int hidden)
    : kind_(kind), d_(dim), c_(classes), h_(hidden) {
  if (kind == "logistic") {
    blocks_ = {{0, d_, c_}, {d_ * c_, c_, 1}};
  } else {
    blocks_ = {{0, d_, h_}, {d_ * h_, h_, 1}, {d_ * h_ + h_, h_, c_}, {d_ * h_ + h_ + h_ * c_, c_, 1}};
  }
  size_ = blocks_.back().offset + blocks_.back().rows * blocks_.back().cols;
}

VectorXd Model::init(Rng& rng) const {
  VectorXd p = VectorXd::Zero(size_);
  for (const Block& b : blocks_)
    if (b.cols > 1)
      for (int i = 0; i < b.rows * b.cols; ++i) p[b.offset + i] = gaussian(rng) / std::sqrt(b.rows);
  return p;
}

double Model::loss(const VectorXd& p, const MatrixXd& x, const std::vector<int>& y, const std::vector<int>& rows,
                   VectorXd* grad, double* acc) const {
  const int n = static_cast<int>(rows.size());
  MatrixXd xb(n, d_);
  for (int i = 0; i < n; ++i) xb.row(i) = x.row(rows[i]);
  auto mat = [&](const Block& b) { return Eigen::Map<const MatrixXd>(p.data() + b.offset, b.rows, b.cols); };
  auto vec = [&](const Block& b) { return Eigen::Map<const VectorXd>(p.data() + b.offset, b.rows); };
  MatrixXd hidden, logits;
  if (kind_ == "logistic") {
    logits = (xb * mat(blocks_[0])).rowwise() + vec(blocks_[1]).transpose();
  } else {
    hidden = ((xb * mat(blocks_[0])).rowwise() + vec(blocks_[1]).transpose()).cwiseMax(0.0);
    logits = (hidden * mat(blocks_[2])).rowwise() + vec(blocks_[3]).transpose();
  }
  MatrixXd prob = logits;
  double total = 0;
  int correct = 0;
  for (int i = 0; i < n; ++i) {
    const double m = prob.row(i).maxCoeff();
    prob.row(i) = (prob.row(i).array() - m).exp();
    const double z = prob.row(i).sum();
    prob.row(i) /= z;
    total += -std::log(std::max(prob(i, y[rows[i]]), 1e-300));
    Eigen::Index arg;
    prob.row(i).maxCoeff(&arg);
    correct += arg == y[rows[i]];
  }
  if (acc) *acc = static_cast<double>(correct) / n;
  if (grad) {
    grad->setZero(size_);
    MatrixXd delta = prob;
    for (int i = 0; i < n; ++i) delta(i, y[rows[i]]) -= 1;
    delta /= n;
    auto gmat = [&](const Block& b) { return Eigen::Map<MatrixXd>(grad->data() + b.offset, b.rows, b.cols); };
    auto gvec = [&](const Block& b) { return Eigen::Map<VectorXd>(grad->data() + b.offset, b.rows); };
    if (kind_ == "logistic") {
      gmat(blocks_[0]) = xb.transpose() * delta;
      gvec(blocks_[1]) = delta.colwise().sum().transpose();
    } else {
      gmat(blocks_[2]) = hidden.transpose() * delta;
      gvec(blocks_[3]) = delta.colwise().sum().transpose();
      MatrixXd dh = (delta * mat(blocks_[2]).transpose()).array() * (hidden.array() > 0).cast<double>();
      gmat(blocks_[0]) = xb.transpose() * dh;
      gvec(blocks_[1]) = dh.colwise().sum().transpose();
    }
  }
  return total / n;
}

}  // namespace dejavu::strategies::convergence
