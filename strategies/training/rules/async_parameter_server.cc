// Asynchronous parameter server with bounded staleness. Each worker loops: pull, compute on
// what it pulled, push; the server applies each push at once (a step is n pushes). A worker
// more than `staleness` iterations ahead of the slowest live one waits for it.
#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>

#include "strategies/training/rules/update_rule.h"

namespace dejavu::strategies::convergence {

namespace {

// The server's weights and what each worker pulled and pushed.
struct Server {
  VectorXd p;
  long version = 0, pushes = 0;
  std::vector<VectorXd> pulled;
  std::vector<long> pulled_version, done;
  std::vector<double> ready;  // when each worker's current gradient is pushed; infinite: waiting
  long bound = 1;

  long slowest(const Trainer& t) const {
    long s = LONG_MAX;
    for (int w : t.live()) s = std::min(s, done[w]);
    return s;
  }
  double cycle(const Trainer& t, int w) const { return t.timing().compute_s[w] + t.timing().communication_s; }
  void pull(const Trainer& t, int w, double now) {
    pulled[w] = p;
    pulled_version[w] = version;
    ready[w] = now + cycle(t, w);
  }
  // Whoever waited may go once the slowest has caught up.
  void release(const Trainer& t, double now) {
    const long low = slowest(t);
    for (int k : t.live())
      if (!std::isfinite(ready[k]) && done[k] - low < bound) pull(t, k, now);
  }
  // The live worker whose push comes first.
  int next(const std::vector<int>& on) const {
    int w = on[0];
    for (int k : on)
      if (ready[k] < ready[w]) w = k;
    return w;
  }
};

class AsyncParameterServer : public UpdateRule {
 public:
  void run(Trainer& t, const VectorXd& start) const override {
    const ConvergenceConfig& c = t.config();
    const int n = t.workers();
    Server sv{start,
              0,
              0,
              std::vector<VectorXd>(n, start),
              std::vector<long>(n, 0),
              std::vector<long>(n, 0),
              std::vector<double>(n),
              std::max(1, c.staleness)};  // a bound of 0 would let nobody pass the slowest
    VectorXd saved = start;
    long saved_pushes = 0;
    const long step0 = t.step();
    for (int w = 0; w < n; ++w) sv.ready[w] = t.now() + sv.cycle(t, w);
    if (!t.started()) t.evaluate(sv.p);
    const long max_pushes = static_cast<long>(c.max_steps - step0) * n;
    while (sv.pushes < max_pushes) {
      const std::vector<int> on = t.live();
      if (on.empty()) break;
      const int w = sv.next(on);
      if (const WorkerFailure* f = t.failure_before(sv.ready[w])) {
        if (t.recover(*f, true)) {
          // Everyone rolls back to the server's checkpoint and pulls it after the restart.
          t.lose_steps((sv.pushes - saved_pushes) / n);
          sv.p = saved;
          saved_pushes = sv.pushes;
          for (int k : t.live()) sv.pull(t, k, t.now());
          if (t.evaluate(sv.p)) break;
        } else {
          sv.ready[f->worker] = INFINITY;
          sv.release(t, f->at_s);
        }
        continue;
      }
      const double now = sv.ready[w];
      sv.p -= c.learning_rate / n * t.sent_gradient(w, sv.pulled[w]);
      t.add_staleness(static_cast<double>(sv.version - sv.pulled_version[w]));
      ++sv.version;
      ++sv.pushes;
      ++sv.done[w];
      sv.pulled[w] = sv.p;
      sv.pulled_version[w] = sv.version;
      sv.ready[w] = sv.done[w] - sv.slowest(t) >= sv.bound ? INFINITY : now + sv.cycle(t, w);
      sv.release(t, now);
      if (sv.pushes % n == 0) {
        t.set_clock(now, step0 + sv.pushes / n);
        if (t.checkpoint_due(sv.pushes / n)) saved = sv.p, saved_pushes = sv.pushes;
        if ((t.eval_due() || sv.pushes == max_pushes) && t.evaluate(sv.p)) break;
      }
    }
  }
};

}  // namespace

std::unique_ptr<UpdateRule> make_async_parameter_server() { return std::make_unique<AsyncParameterServer>(); }

}  // namespace dejavu::strategies::convergence
