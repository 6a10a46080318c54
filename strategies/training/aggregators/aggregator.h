// How the workers' gradients combine into one update: the mean, or a rule robust to
// Byzantine workers. A registry entry named by `converge --aggregator`; each rule is one
// file in this folder, registered in aggregators.cc.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <string>
#include <vector>

#include "sim/registry.h"

namespace dejavu::strategies::convergence {

struct AggregationContext {
  const Eigen::VectorXd& weights;  // the model the gradients are applied to
  int trim = 0;                    // b: how many workers may be bad (at most (m - 1) / 2 of m)
  double learning_rate = 0;
  std::function<double(const Eigen::VectorXd&)> probe_loss;  // loss on a small validation batch
};

class Aggregator {
 public:
  virtual ~Aggregator() = default;
  // Why `workers` workers with `trim` suspected cannot use this rule; empty when they can.
  virtual std::string check(int workers, int trim) const { return ""; }
  // The update for m >= 2 gradients.
  virtual Eigen::VectorXd combine(const std::vector<Eigen::VectorXd>& gradients,
                                  const AggregationContext& ctx) const = 0;
};

Registry<Aggregator>& aggregators();
void register_aggregators();  // called by register_training()

// Each coordinate's values over the gradients, sorted, reduced by `reduce`.
Eigen::VectorXd coordinate_wise(const std::vector<Eigen::VectorXd>& gradients,
                                const std::function<double(const std::vector<double>&)>& reduce);

}  // namespace dejavu::strategies::convergence
