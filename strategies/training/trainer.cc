#include "strategies/training/trainer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/error.h"
#include "strategies/training/rules/update_rule.h"

namespace dejavu::strategies::convergence {

Trainer::Trainer(const ConvergenceConfig& c, const WorkerTiming& timing, const std::string& name)
    : c_(c),
      timing_(timing),
      n_(c.workers),
      data_(make_data(c.data, c.workers)),
      model_(c.model, c.data.dim, c.data.classes, c.hidden),
      wire_(c, model_, c.workers),
      aggregator_(aggregators().make(c.aggregator)),
      recovery_(recovery_policies().make(c.recovery.policy)),
      rule_(update_rules().make(c.rule)),
      alive_(c.workers, true),
      spares_(c.recovery.spares),
      failures_(c.failures) {
  Rng rng = init_stream(c.seed);
  start_ = model_.init(rng);
  for (int w = 0; w < n_; ++w) worker_rng_.push_back(worker_stream(c.seed, w));
  all_valid_.resize(data_.vy.size());
  std::iota(all_valid_.begin(), all_valid_.end(), 0);
  zeno_rows_.assign(all_valid_.begin(), all_valid_.begin() + 64);
  std::stable_sort(failures_.begin(), failures_.end(), [](const auto& a, const auto& b) { return a.at_s < b.at_s; });
  for (const WorkerFailure& f : failures_)
    if (f.worker < 0 || f.worker >= n_)
      throw Error("a fail-stop names worker " + std::to_string(f.worker) + " of " + std::to_string(n_));
  r_.name = name;
}

Trainer::~Trainer() = default;

ConvergenceResult Trainer::run() {
  const VectorXd start = choose_start();
  if (!r_.reached) rule_->run(*this, start);
  r_.mean_staleness = staleness_count_ ? staleness_sum_ / staleness_count_ : 0;
  r_.workers_left = static_cast<int>(std::count(alive_.begin(), alive_.end(), true));
  return r_;
}

std::vector<int> Trainer::live() const {
  std::vector<int> out;
  for (int w = 0; w < n_; ++w)
    if (alive_[w]) out.push_back(w);
  return out;
}

VectorXd Trainer::initial_weights(int k) const {
  Rng own = init_stream(c_.seed, k);
  return model_.init(own);
}

VectorXd Trainer::sent_gradient(int w, const VectorXd& p) {
  VectorXd g;
  model_.loss(p, data_.x[w], data_.y[w], minibatch(worker_rng_[w], data_.y[w].size(), c_.batch), &g);
  return wire_.send(w, g, worker_rng_[w]);
}

VectorXd Trainer::aggregate(const std::vector<VectorXd>& gs, const VectorXd& p) const {
  const int m = static_cast<int>(gs.size());
  if (m == 1) return gs[0];  // what every rule makes of one gradient
  const AggregationContext ctx{p, std::min(c_.trim, (m - 1) / 2), c_.learning_rate, [&](const VectorXd& q) {
                                 return model_.loss(q, data_.vx, data_.vy, zeno_rows_, nullptr);
                               }};
  return aggregator_->combine(gs, ctx);
}

double Trainer::validation_loss(const VectorXd& p, double* acc) const {
  return model_.loss(p, data_.vx, data_.vy, all_valid_, nullptr, acc);
}

bool Trainer::evaluate(const VectorXd& p, double consensus) {
  CurvePoint pt;
  pt.time_s = t_;
  pt.step = step_;
  pt.loss = validation_loss(p, &pt.accuracy);
  pt.consensus = consensus;
  r_.curve.push_back(pt);
  if (!r_.reached && pt.loss <= c_.target_loss) {
    r_.reached = true;
    r_.time_to_target_s = t_;
    r_.steps_to_target = step_;
  }
  return r_.reached;
}

void Trainer::advance(double step_s) {
  ++step_;
  t_ = t_base_ + static_cast<double>(step_ - step_base_) * step_s;
}

void Trainer::restart_clock() {
  t_base_ = t_;
  step_base_ = step_;
}

const WorkerFailure* Trainer::failure_before(double until) {
  while (next_failure_ < failures_.size() && !alive_[failures_[next_failure_].worker]) ++next_failure_;
  if (next_failure_ < failures_.size() && failures_[next_failure_].at_s < until) return &failures_[next_failure_++];
  return nullptr;
}

bool Trainer::recover(const WorkerFailure& f, bool decentralised) {
  ++r_.failures;
  const RecoveryAction action = recovery_->on_failure(spares_);
  if (action == RecoveryAction::Shrink) {
    alive_[f.worker] = false;
    if (decentralised) return false;
  }
  t_ = std::max(t_, f.at_s);
  const double down = action == RecoveryAction::SwapSpare ? c_.recovery.swap_s : c_.recovery.restart_s;
  t_ += down;
  r_.downtime_s += down;
  restart_clock();
  return true;
}

}  // namespace dejavu::strategies::convergence
