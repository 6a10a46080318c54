// Rules where each worker keeps its own model and steps on its own gradient: gossip (average
// with seeded-random peers, or both ring neighbours) and delayed averaging (the workers'
// average arrives `delay` steps late, hidden behind those steps). The loss is the workers'
// average model's; the curve records their consensus. A fail-stop under elastic recovery
// just drops the worker; otherwise everyone rolls back to the checkpoint.
#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>

#include "strategies/training/rules/update_rule.h"

namespace dejavu::strategies::convergence {

namespace {

struct Local {
  std::vector<VectorXd> models;                                      // per worker
  std::deque<std::pair<std::vector<VectorXd>, VectorXd>> in_flight;  // own gradients, their average
  long applied = 0;
};

VectorXd average(const Trainer& t, const Local& s) {
  VectorXd sum = VectorXd::Zero(s.models[0].size());
  const std::vector<int> on = t.live();
  for (int w : on) sum += s.models[w];
  return sum / static_cast<double>(on.size());
}

class LocalModels : public UpdateRule {
 public:
  void run(Trainer& t, const VectorXd& start) const override {
    const ConvergenceConfig& c = t.config();
    Local s{std::vector<VectorXd>(t.workers(), start), {}, 0};
    if (c.independent_init && c.init_candidates <= 1)
      for (int w = 0; w < t.workers(); ++w) s.models[w] = t.initial_weights(w + 1);
    Local saved = s;
    const double step_s = step_seconds(t);
    Rng rng(c.seed + 77);
    t.restart_clock();
    if (!t.started()) t.evaluate(average(t, s));
    while (t.step() < c.max_steps) {
      if (const WorkerFailure* f = t.failure_before(t.now() + step_s)) {
        if (t.recover(*f, true)) {
          t.lose_steps(s.applied - saved.applied);
          s = saved;
          if (t.evaluate(average(t, s))) break;
        } else if (t.live().empty()) {
          break;
        }
        continue;
      }
      const std::vector<int> on = t.live();
      std::vector<VectorXd> gs(t.workers());
      for (int w : on) gs[w] = t.sent_gradient(w, s.models[w]);
      for (int w : on) s.models[w] -= c.learning_rate * gs[w];
      exchange(t, s, gs, on, rng);
      ++s.applied;
      t.advance(step_s);
      if (t.checkpoint_due(s.applied)) saved = s;
      if (t.eval_due() && evaluate(t, s, on)) break;
    }
  }

 protected:
  virtual double step_seconds(const Trainer& t) const { return t.timing().iteration_s; }
  // After each worker's own step: what the workers learn of the others.
  virtual void exchange(Trainer& t, Local& s, const std::vector<VectorXd>& gs, const std::vector<int>& on,
                        Rng& rng) const = 0;

 private:
  static bool evaluate(Trainer& t, const Local& s, const std::vector<int>& on) {
    const VectorXd mean = average(t, s);
    double spread = 0;
    for (int w : on) spread += (s.models[w] - mean).squaredNorm();
    return t.evaluate(mean, std::sqrt(spread / static_cast<double>(on.size())));
  }
};

class Gossip : public LocalModels {
  void exchange(Trainer& t, Local& s, const std::vector<VectorXd>&, const std::vector<int>& on,
                Rng& rng) const override {
    const int m = static_cast<int>(on.size());
    const std::vector<VectorXd> before = s.models;
    if (t.config().gossip_topology == "ring") {
      // Each worker averages with both neighbours on the ring of live workers:
      // W = (I + shift + shift^T) / 3.
      for (int i = 0; i < m; ++i)
        s.models[on[i]] = (before[on[(i + m - 1) % m]] + before[on[i]] + before[on[(i + 1) % m]]) / 3;
      return;
    }
    for (int i = 0; i < m; ++i) {
      VectorXd sum = before[on[i]];
      int heard = 0;
      for (int j = 0; j < t.config().peers && m > 1; ++j, ++heard) {
        int peer = static_cast<int>(below(rng, m - 1));
        if (peer >= i) ++peer;
        sum += before[on[peer]];
      }
      s.models[on[i]] = sum / (heard + 1);
    }
  }
};

class DelayedAveraging : public LocalModels {
  // The exchange hides behind `delay` steps: a step takes the longer of the slowest
  // compute and the exchange spread over them (or the simulated steady state).
  double step_seconds(const Trainer& t) const override {
    const WorkerTiming& timing = t.timing();
    double compute_max = 0;
    for (double x : timing.compute_s) compute_max = std::max(compute_max, x);
    return std::max(compute_max, timing.delayed_step_s > 0 ? timing.delayed_step_s
                                                           : timing.communication_s / std::max(1, t.config().delay));
  }
  void exchange(Trainer& t, Local& s, const std::vector<VectorXd>& gs, const std::vector<int>& on,
                Rng&) const override {
    const ConvergenceConfig& c = t.config();
    std::vector<VectorXd> mine;
    for (int w : on) mine.push_back(gs[w]);
    s.in_flight.push_back({gs, t.aggregate(mine, average(t, s))});
    if (static_cast<int>(s.in_flight.size()) <= c.delay) return;
    // The average of `delay` steps ago arrives: replace each worker's own gradient by it.
    const auto& [own, avg] = s.in_flight.front();
    for (int w : on)
      if (own[w].size()) s.models[w] += c.learning_rate * (own[w] - avg);
    s.in_flight.pop_front();
    t.add_staleness(c.delay);
  }
};

}  // namespace

std::unique_ptr<UpdateRule> make_gossip() { return std::make_unique<Gossip>(); }
std::unique_ptr<UpdateRule> make_delayed_averaging() { return std::make_unique<DelayedAveraging>(); }

}  // namespace dejavu::strategies::convergence
