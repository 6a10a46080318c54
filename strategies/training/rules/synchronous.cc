// Synchronous data parallelism: one global model, every live worker's gradient aggregated
// each iteration. PipeDream's weight stashing is the same on weights `staleness` steps old.
// A fail-stop rolls everyone back to the last checkpoint (or, elastic, goes on without it).
#include <deque>
#include <memory>

#include "strategies/training/rules/update_rule.h"

namespace dejavu::strategies::convergence {

namespace {

class Synchronous : public UpdateRule {
 public:
  explicit Synchronous(bool stale) : stale_(stale) {}

  void run(Trainer& t, const VectorXd& start) const override {
    const ConvergenceConfig& c = t.config();
    struct State {
      VectorXd p;
      std::deque<VectorXd> past;  // the weights gradients are computed on
      long applied = 0;
    } s{start, {}, 0};
    State saved = s;
    const int depth = stale_ ? c.staleness : 0;
    const double step_s = t.timing().iteration_s;
    t.restart_clock();
    if (!t.started()) t.evaluate(s.p);
    while (t.step() < c.max_steps) {
      if (const WorkerFailure* f = t.failure_before(t.now() + step_s)) {
        t.recover(*f, false);
        t.lose_steps(s.applied - saved.applied);
        s = saved;
        if (t.live().empty() || t.evaluate(s.p)) break;
        continue;
      }
      s.past.push_back(s.p);
      if (static_cast<int>(s.past.size()) > depth + 1) s.past.pop_front();
      const VectorXd& at = s.past.front();
      std::vector<VectorXd> gs;
      for (int w : t.live()) gs.push_back(t.sent_gradient(w, at));
      s.p -= c.learning_rate * t.aggregate(gs, s.p);
      ++s.applied;
      t.add_staleness(static_cast<double>(s.past.size() - 1));
      t.advance(step_s);
      if (t.checkpoint_due(s.applied)) saved = s;
      if (t.eval_due() && t.evaluate(s.p)) break;
    }
  }

 private:
  bool stale_;
};

}  // namespace

std::unique_ptr<UpdateRule> make_synchronous() { return std::make_unique<Synchronous>(false); }
std::unique_ptr<UpdateRule> make_pipedream() { return std::make_unique<Synchronous>(true); }

}  // namespace dejavu::strategies::convergence
