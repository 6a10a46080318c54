// One convergence run: the workers' real gradients on a simulated clock, fail-stops and
// their recovery, and (optionally) a probe over several initialisations first. The update
// rule (rules/) drives the steps through the public methods below.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "strategies/recovery/recovery_policy.h"
#include "strategies/training/aggregators/aggregator.h"
#include "strategies/training/convergence_model.h"
#include "strategies/training/wire.h"

namespace dejavu::strategies::convergence {

class UpdateRule;

class Trainer {
 public:
  Trainer(const ConvergenceConfig& config, const WorkerTiming& timing, const std::string& name);
  ~Trainer();
  ConvergenceResult run();

  const ConvergenceConfig& config() const { return c_; }
  const WorkerTiming& timing() const { return timing_; }
  int workers() const { return n_; }
  std::vector<int> live() const;
  // Seeded initial weights of stream k (0: the run's).
  VectorXd initial_weights(int k) const;

  // Worker w's minibatch gradient at p as the others receive it (compressed, corrupted).
  VectorXd sent_gradient(int w, const VectorXd& p);
  // The aggregator's update from the gradients, applied to weights p.
  VectorXd aggregate(const std::vector<VectorXd>& gs, const VectorXd& p) const;

  // A point of the curve at the current clock; true once the target is reached.
  bool evaluate(const VectorXd& p, double consensus = 0);
  bool started() const { return !r_.curve.empty(); }
  bool eval_due() const { return step_ % c_.eval_every == 0 || step_ == c_.max_steps; }
  bool checkpoint_due(long applied) const { return c_.checkpoint_every > 0 && applied % c_.checkpoint_every == 0; }

  // The clock: one more step of `step_s` (counted from the last restart, so that k equal
  // steps end at exactly k times the step), or set outright.
  void advance(double step_s);
  void restart_clock();
  void set_clock(double t, long step) { t_ = t, step_ = step; }
  double now() const { return t_; }
  long step() const { return step_; }

  // The next fail-stop of a live worker before `until`, taken off the list; null if none.
  const WorkerFailure* failure_before(double until);
  // Applies the recovery policy to a fail-stop. Returns true when the job stops and rolls
  // back to its checkpoint; false when the others go on without the worker (elastic, and
  // `decentralised`: nobody waits for it).
  bool recover(const WorkerFailure& f, bool decentralised);
  void lose_steps(long steps) { r_.steps_lost += steps; }
  void add_staleness(double steps) { staleness_sum_ += steps, ++staleness_count_; }

 private:
  double validation_loss(const VectorXd& p, double* acc = nullptr) const;
  VectorXd choose_start();
  void probe(std::vector<VectorXd>& candidates);
  std::pair<int, VectorXd> best_of(const std::vector<VectorXd>& ps) const;

  const ConvergenceConfig& c_;
  const WorkerTiming& timing_;
  const int n_;
  const Data data_;
  const Model model_;
  Wire wire_;
  std::unique_ptr<Aggregator> aggregator_;
  std::unique_ptr<RecoveryPolicy> recovery_;
  std::unique_ptr<UpdateRule> rule_;
  std::vector<bool> alive_;
  int spares_;
  std::vector<WorkerFailure> failures_;
  size_t next_failure_ = 0;
  VectorXd start_;
  std::vector<Rng> worker_rng_;
  std::vector<int> all_valid_, zeno_rows_;
  ConvergenceResult r_;
  double t_ = 0, t_base_ = 0;      // the simulated clock; where it stood at the last restart
  long step_ = 0, step_base_ = 0;  // steps computed, lost ones included
  double staleness_sum_ = 0;
  long staleness_count_ = 0;
};

}  // namespace dejavu::strategies::convergence
