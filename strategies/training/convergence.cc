#include "strategies/training/convergence.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

#include "sim/error.h"
#include "strategies/training/convergence_model.h"

namespace dejavu::strategies {

using namespace convergence;

namespace {

// A worker's gradient on the wire: compressed (with its error-feedback memory) and, for a
// Byzantine worker, corrupted.
class Wire {
 public:
  Wire(const ConvergenceConfig& c, const Model& m, int workers)
      : c_(c), m_(m), error_(workers, VectorXd::Zero(m.size())), q_(workers) {}

  VectorXd send(int w, const VectorXd& g, Rng& rng) {
    VectorXd v = g;
    const std::string& z = c_.compression;
    if (z == "topk" || z == "1bit" || z == "powersgd") v += error_[w];
    VectorXd out = v;
    if (z == "topk") {
      const int k = std::max(1, static_cast<int>(std::lround(c_.density * v.size())));
      std::vector<int> idx(v.size());
      std::iota(idx.begin(), idx.end(), 0);
      std::nth_element(idx.begin(), idx.begin() + (k - 1), idx.end(),
                       [&](int a, int b) { return std::fabs(v[a]) > std::fabs(v[b]) || (std::fabs(v[a]) == std::fabs(v[b]) && a < b); });
      out.setZero();
      for (int i = 0; i < k; ++i) out[idx[i]] = v[idx[i]];
    } else if (z == "1bit") {
      const double scale = v.cwiseAbs().mean();
      for (int i = 0; i < v.size(); ++i) out[i] = v[i] >= 0 ? scale : -scale;
    } else if (z == "terngrad") {
      const double s = v.cwiseAbs().maxCoeff();
      for (int i = 0; i < v.size(); ++i)
        out[i] = s > 0 && uniform(rng) < std::fabs(v[i]) / s ? (v[i] >= 0 ? s : -s) : 0.0;
    } else if (z == "powersgd") {
      if (q_[w].empty()) q_[w].resize(m_.blocks().size());
      for (size_t bi = 0; bi < m_.blocks().size(); ++bi) {
        const Block& b = m_.blocks()[bi];
        if (b.cols == 1) continue;  // vectors travel whole
        const int r = std::min({c_.rank, b.rows, b.cols});
        Eigen::Map<MatrixXd> M(v.data() + b.offset, b.rows, b.cols);
        MatrixXd& Q = q_[w][bi];
        if (Q.rows() != b.cols) {
          Q.resize(b.cols, r);
          for (int i = 0; i < Q.size(); ++i) Q.data()[i] = gaussian(rng);
        }
        MatrixXd P = M * Q;
        Eigen::HouseholderQR<MatrixXd> qr(P);
        P = qr.householderQ() * MatrixXd::Identity(b.rows, r);
        Q = M.transpose() * P;  // warm start for the next step
        Eigen::Map<MatrixXd>(out.data() + b.offset, b.rows, b.cols) = P * Q.transpose();
      }
    }
    if (z == "topk" || z == "1bit" || z == "powersgd") error_[w] = v - out;
    for (const ByzantineWorker& b : c_.byzantine)
      if (b.gpu == w) {
        if (b.mode == "random") {
          const double norm = std::max(out.norm(), 1e-12);
          VectorXd noise(out.size());
          for (int i = 0; i < noise.size(); ++i) noise[i] = gaussian(rng);
          out = noise * (10 * norm / noise.norm());
        } else {
          out *= b.mode == "sign_flip" ? -std::fabs(b.factor) : b.factor;  // flipped (x|factor|) or scaled
        }
      }
    return out;
  }

 private:
  const ConvergenceConfig& c_;
  const Model& m_;
  std::vector<VectorXd> error_;
  std::vector<std::vector<MatrixXd>> q_;
};

}  // namespace

ConvergenceData parse_data_spec(const std::string& spec) {
  ConvergenceData d;
  const std::string prefix = "synthetic:";
  if (spec.rfind("synthetic", 0) != 0)
    throw ConfigError(SourceLoc{"--data", 0, 0}, "", "\"" + spec + "\"; valid: synthetic:classes=10,dim=64,...");
  std::stringstream ss(spec.size() > prefix.size() ? spec.substr(prefix.size()) : "");
  std::string kv;
  while (std::getline(ss, kv, ',')) {
    const size_t eq = kv.find('=');
    const std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0')
      throw ConfigError(SourceLoc{"--data", 0, 0}, k, "expected key=number, got \"" + kv + "\"");
    // Each key's range, and whether it must be whole; the data fit in memory (check_config).
    struct Key {
      const char* name;
      double min, max;
      bool whole;
    };
    static const Key keys[] = {{"classes", 2, 1000, true},   {"dim", 1, 100000, true},   {"samples", 1, 1000000, true},
                               {"separation", 1e-6, 1e6, false}, {"skew", 0, 1, false}, {"imbalance", 1, 1e6, false},
                               {"seed", 0, 9007199254740992.0, true}};
    const Key* key = nullptr;
    for (const Key& c : keys)
      if (k == c.name) key = &c;
    if (!key)
      throw ConfigError(SourceLoc{"--data", 0, 0}, k,
                        "unknown key in \"" + kv + "\"; valid: classes, dim, samples, separation, skew, imbalance, seed");
    if (!std::isfinite(x) || x < key->min || x > key->max || (key->whole && x != std::floor(x))) {
      char range[128];
      std::snprintf(range, sizeof range, "expected %s from %g to %g, got %s", key->whole ? "a whole number" : "a number",
                    key->min, key->max, v.c_str());
      throw ConfigError(SourceLoc{"--data", 0, 0}, k, range);
    }
    if (k == "classes") d.classes = static_cast<int>(x);
    else if (k == "dim") d.dim = static_cast<int>(x);
    else if (k == "samples") d.samples_per_worker = static_cast<int>(x);
    else if (k == "separation") d.separation = x;
    else if (k == "skew") d.skew = x;
    else if (k == "imbalance") d.imbalance = x;
    else d.seed = static_cast<unsigned long long>(x);
  }
  return d;
}

namespace {

// One run: the workers' real gradients on a simulated clock, fail-stops and their
// recovery, and (optionally) a probe over several initialisations first.
class Trainer {
 public:
  Trainer(const ConvergenceConfig& c, const WorkerTiming& timing, const std::string& name)
      : c_(c),
        timing_(timing),
        n_(c.workers),
        data_(make_data(c.data, c.workers)),
        model_(c.model, c.data.dim, c.data.classes, c.hidden),
        wire_(c, model_, c.workers),
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

  ConvergenceResult run() {
    const VectorXd start = choose_start();
    if (!r_.reached) {
      if (c_.rule == "sync" || c_.rule == "pipedream") {
        run_global(start);
      } else if (c_.rule == "gossip" || c_.rule == "delayed") {
        run_local(start);
      } else if (c_.rule == "ps-async") {
        run_async(start);
      } else {
        throw ConfigError(SourceLoc{"--rule", 0, 0}, "",
                          "unknown update rule \"" + c_.rule + "\"; valid: sync, ps-async, gossip, pipedream, delayed");
      }
    }
    r_.mean_staleness = staleness_count_ ? staleness_sum_ / staleness_count_ : 0;
    r_.workers_left = static_cast<int>(std::count(alive_.begin(), alive_.end(), true));
    return r_;
  }

 private:
  std::vector<int> live() const {
    std::vector<int> out;
    for (int w = 0; w < n_; ++w)
      if (alive_[w]) out.push_back(w);
    return out;
  }

  VectorXd gradient(int w, const VectorXd& p) {
    VectorXd g;
    model_.loss(p, data_.x[w], data_.y[w], minibatch(worker_rng_[w], data_.y[w].size(), c_.batch), &g);
    return g;
  }

  VectorXd aggregate(const std::vector<VectorXd>& gs, const VectorXd& p) const {
    const int m = static_cast<int>(gs.size());
    const int b = std::min(c_.trim, (m - 1) / 2);
    if (c_.aggregator == "mean" || m == 1) {
      VectorXd s = VectorXd::Zero(gs[0].size());
      for (const auto& g : gs) s += g;
      return s / m;
    }
    if (c_.aggregator == "median" || c_.aggregator == "trimmed") {
      VectorXd out(gs[0].size());
      std::vector<double> col(m);
      for (int i = 0; i < out.size(); ++i) {
        for (int k = 0; k < m; ++k) col[k] = gs[k][i];
        std::sort(col.begin(), col.end());
        if (c_.aggregator == "median") {
          out[i] = m % 2 ? col[m / 2] : (col[m / 2 - 1] + col[m / 2]) / 2;
        } else {
          double s = 0;
          for (int k = b; k < m - b; ++k) s += col[k];
          out[i] = s / (m - 2 * b);
        }
      }
      return out;
    }
    if (c_.aggregator == "krum") {
      // The gradient closest (sum of squared distances) to its m - b - 2 nearest others.
      const int near = std::max(1, m - b - 2);
      double best = INFINITY;
      int pick = 0;
      for (int i = 0; i < m; ++i) {
        std::vector<double> d;
        for (int k = 0; k < m; ++k)
          if (k != i) d.push_back((gs[i] - gs[k]).squaredNorm());
        std::sort(d.begin(), d.end());
        const double score = std::accumulate(d.begin(), d.begin() + std::min<int>(near, d.size()), 0.0);
        if (score < best) best = score, pick = i;
      }
      return gs[pick];
    }
    // Zeno: score each gradient by the loss decrease it gives on a small validation batch,
    // drop the b worst, average the rest.
    const double base = model_.loss(p, data_.vx, data_.vy, zeno_rows_, nullptr);
    std::vector<std::pair<double, int>> score;
    for (int i = 0; i < m; ++i) {
      const VectorXd q = p - c_.learning_rate * gs[i];
      score.push_back(
          {base - model_.loss(q, data_.vx, data_.vy, zeno_rows_, nullptr) - 1e-4 * c_.learning_rate * gs[i].squaredNorm(), i});
    }
    std::sort(score.begin(), score.end(), std::greater<>());
    VectorXd s = VectorXd::Zero(gs[0].size());
    for (int k = 0; k < m - b; ++k) s += gs[score[k].second];
    return s / (m - b);
  }

  double validation_loss(const VectorXd& p, double* acc = nullptr) const {
    return model_.loss(p, data_.vx, data_.vy, all_valid_, nullptr, acc);
  }

  // A point of the curve at the current clock; true once the target is reached.
  bool evaluate(const VectorXd& p, double consensus = 0) {
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
  bool eval_due() const { return step_ % c_.eval_every == 0 || step_ == c_.max_steps; }

  // One more step of `step_s` on the clock (counted from the last restart, so that k equal
  // steps end at exactly k times the step).
  void advance(double step_s) {
    ++step_;
    t_ = t_base_ + static_cast<double>(step_ - step_base_) * step_s;
  }

  // The next fail-stop of a live worker before `until`, taken off the list; null if none.
  const WorkerFailure* failure_before(double until) {
    while (next_failure_ < failures_.size() && !alive_[failures_[next_failure_].worker]) ++next_failure_;
    if (next_failure_ < failures_.size() && failures_[next_failure_].at_s < until) return &failures_[next_failure_++];
    return nullptr;
  }

  // Applies the recovery policy to a fail-stop. Returns true when the job stops and rolls
  // back to its checkpoint; false when the others go on without the worker (elastic, and
  // `decentralised`: nobody waits for it).
  bool recover(const WorkerFailure& f, bool decentralised) {
    ++r_.failures;
    const Recovery& rec = c_.recovery;
    if (rec.policy == "elastic") {
      alive_[f.worker] = false;
      if (decentralised) return false;
    }
    t_ = std::max(t_, f.at_s);
    double down = rec.restart_s;
    if (rec.policy == "spares" && spares_ > 0) {
      --spares_;
      down = rec.swap_s;
    }
    t_ += down;
    r_.downtime_s += down;
    restart_clock();
    return true;
  }
  void restart_clock() {
    t_base_ = t_;
    step_base_ = step_;
  }
  bool checkpoint_due(long applied) const { return c_.checkpoint_every > 0 && applied % c_.checkpoint_every == 0; }

  // Parallel random initialisation (a no-op for one candidate).
  VectorXd choose_start() {
    const int K = c_.init_candidates;
    if (K <= 1) return start_;
    if (K > n_)
      throw ConfigError(SourceLoc{"--init-candidates", 0, 0}, "",
                        std::to_string(K) + " initialisations need as many workers; the plan has " + std::to_string(n_));
    std::vector<VectorXd> cand;
    cand.push_back(start_);
    for (int k = 1; k < K; ++k) {
      Rng own = init_stream(c_.seed, k);
      cand.push_back(model_.init(own));
    }
    // Each candidate is trained synchronously by the workers w with w % candidates == its
    // index, all candidates at once: a probe step takes one iteration.
    auto probe = [&](std::vector<VectorXd>& ps) {
      const int m = static_cast<int>(ps.size());
      for (int s = 0; s < c_.probe_steps && step_ < c_.max_steps && !r_.reached; ++s) {
        for (int k = 0; k < m; ++k) {
          std::vector<VectorXd> gs;
          for (int w = k; w < n_; w += m) gs.push_back(wire_.send(w, gradient(w, ps[k]), worker_rng_[w]));
          ps[k] -= c_.learning_rate * aggregate(gs, ps[k]);
        }
        advance(timing_.iteration_s);
        if (eval_due()) evaluate(best_of(ps).second);
      }
    };
    evaluate(start_);
    probe(cand);
    std::vector<std::pair<double, int>> ranked;
    for (int k = 0; k < K; ++k) {
      r_.probe_losses.push_back(validation_loss(cand[k]));
      ranked.push_back({r_.probe_losses.back(), k});
    }
    std::sort(ranked.begin(), ranked.end());
    const int keep = std::clamp(c_.keep, 1, K);
    std::vector<int> origin;
    if (keep > 1 || c_.resample > 0) {
      std::vector<VectorXd> next;
      for (int i = 0; i < keep; ++i) next.push_back(cand[ranked[i].second]), origin.push_back(ranked[i].second);
      if (c_.resample > 0) {
        // Resample near the best: its weights plus noise of `resample` times their RMS.
        Rng noise(c_.seed * 0x9E3779B97F4A7C15ULL + 0xA11CE);
        const VectorXd& best = cand[ranked[0].second];
        const double scale = c_.resample * best.norm() / std::sqrt(static_cast<double>(best.size()));
        for (int i = keep; i < K; ++i) {
          VectorXd q = best;
          for (int j = 0; j < q.size(); ++j) q[j] += scale * gaussian(noise);
          next.push_back(q);
          origin.push_back(ranked[0].second);
        }
      }
      probe(next);
      cand = std::move(next);
    } else {
      for (int k = 0; k < K; ++k) origin.push_back(k);
    }
    const auto [pick, best] = best_of(cand);
    r_.chosen_init = origin[pick];
    if (r_.curve.back().step != step_) evaluate(best);
    return best;
  }
  std::pair<int, VectorXd> best_of(const std::vector<VectorXd>& ps) const {
    int pick = 0;
    double best = INFINITY;
    for (size_t k = 0; k < ps.size(); ++k)
      if (const double l = validation_loss(ps[k]); l < best) best = l, pick = static_cast<int>(k);
    return {pick, ps[pick]};
  }

  // sync and pipedream: one global model; every live worker's gradient each iteration.
  void run_global(const VectorXd& start) {
    struct State {
      VectorXd p;
      std::deque<VectorXd> past;  // pipedream: the weights gradients are computed on
      long applied = 0;
    } s{start, {}, 0};
    State saved = s;
    const int depth = c_.rule == "pipedream" ? c_.staleness : 0;
    restart_clock();
    if (r_.curve.empty()) evaluate(s.p);
    while (step_ < c_.max_steps) {
      if (const WorkerFailure* f = failure_before(t_ + timing_.iteration_s)) {
        recover(*f, false);
        r_.steps_lost += s.applied - saved.applied;
        s = saved;
        if (live().empty()) break;
        if (evaluate(s.p)) break;
        continue;
      }
      s.past.push_back(s.p);
      if (static_cast<int>(s.past.size()) > depth + 1) s.past.pop_front();
      const VectorXd& at = s.past.front();
      std::vector<VectorXd> gs;
      for (int w : live()) gs.push_back(wire_.send(w, gradient(w, at), worker_rng_[w]));
      s.p -= c_.learning_rate * aggregate(gs, s.p);
      ++s.applied;
      staleness_sum_ += static_cast<double>(s.past.size() - 1);
      ++staleness_count_;
      advance(timing_.iteration_s);
      if (checkpoint_due(s.applied)) saved = s;
      if (eval_due() && evaluate(s.p)) break;
    }
  }

  // gossip and delayed averaging: each worker keeps its own model.
  void run_local(const VectorXd& start) {
    struct State {
      std::vector<VectorXd> local;
      std::deque<std::pair<std::vector<VectorXd>, VectorXd>> in_flight;  // own gradients, their average
      long applied = 0;
    } s{std::vector<VectorXd>(n_, start), {}, 0};
    if (c_.independent_init && c_.init_candidates <= 1)
      for (int w = 0; w < n_; ++w) {
        Rng own = init_stream(c_.seed, w + 1);
        s.local[w] = model_.init(own);
      }
    State saved = s;
    auto average = [&] {
      VectorXd sum = VectorXd::Zero(start.size());
      const std::vector<int> on = live();
      for (int w : on) sum += s.local[w];
      return VectorXd(sum / static_cast<double>(on.size()));
    };
    // Delayed averaging hides the exchange behind `delay` steps: a step takes the longer of
    // the slowest compute and the exchange spread over them.
    double compute_max = 0;
    for (double x : timing_.compute_s) compute_max = std::max(compute_max, x);
    const double step_s =
        c_.rule != "delayed"
            ? timing_.iteration_s
            : std::max(compute_max, timing_.delayed_step_s > 0 ? timing_.delayed_step_s
                                                               : timing_.communication_s / std::max(1, c_.delay));
    Rng gossip_rng(c_.seed + 77);
    restart_clock();
    if (r_.curve.empty()) evaluate(average());
    while (step_ < c_.max_steps) {
      if (const WorkerFailure* f = failure_before(t_ + step_s)) {
        if (recover(*f, true)) {
          r_.steps_lost += s.applied - saved.applied;
          s = saved;
          if (evaluate(average())) break;
        } else if (live().empty()) {
          break;
        }
        continue;
      }
      const std::vector<int> on = live();
      const int m = static_cast<int>(on.size());
      std::vector<VectorXd> gs(n_);
      for (int w : on) gs[w] = wire_.send(w, gradient(w, s.local[w]), worker_rng_[w]);
      for (int w : on) s.local[w] -= c_.learning_rate * gs[w];
      if (c_.rule == "gossip" && c_.gossip_topology == "ring") {
        // Each worker averages with both neighbours on the ring of live workers:
        // W = (I + shift + shift^T) / 3.
        const std::vector<VectorXd> before = s.local;
        for (int i = 0; i < m; ++i)
          s.local[on[i]] = (before[on[(i + m - 1) % m]] + before[on[i]] + before[on[(i + 1) % m]]) / 3;
      } else if (c_.rule == "gossip") {
        const std::vector<VectorXd> before = s.local;
        for (int i = 0; i < m; ++i) {
          VectorXd sum = before[on[i]];
          int heard = 0;
          for (int j = 0; j < c_.peers && m > 1; ++j, ++heard) {
            int peer = static_cast<int>(below(gossip_rng, m - 1));
            if (peer >= i) ++peer;
            sum += before[on[peer]];
          }
          s.local[on[i]] = sum / (heard + 1);
        }
      } else {
        std::vector<VectorXd> mine;
        for (int w : on) mine.push_back(gs[w]);
        s.in_flight.push_back({gs, aggregate(mine, average())});
        if (static_cast<int>(s.in_flight.size()) > c_.delay) {
          // The average of `delay` steps ago arrives: replace each worker's own gradient by it.
          const auto& [own, avg] = s.in_flight.front();
          for (int w : on)
            if (own[w].size()) s.local[w] += c_.learning_rate * (own[w] - avg);
          s.in_flight.pop_front();
          staleness_sum_ += c_.delay;
          ++staleness_count_;
        }
      }
      ++s.applied;
      advance(step_s);
      if (checkpoint_due(s.applied)) saved = s;
      if (eval_due()) {
        const VectorXd mean = average();
        double spread = 0;
        for (int w : on) spread += (s.local[w] - mean).squaredNorm();
        if (evaluate(mean, std::sqrt(spread / m))) break;
      }
    }
  }

  // Asynchronous parameter server. Each worker loops: pull, compute on what it pulled, push;
  // the server applies each push at once (a step is n pushes). A worker more than
  // `staleness` iterations ahead of the slowest live one waits for it.
  void run_async(const VectorXd& start) {
    VectorXd p = start, saved = start;
    long version = 0, pushes = 0, saved_pushes = 0;
    std::vector<VectorXd> pulled(n_, start);
    std::vector<long> pulled_version(n_, 0), done(n_, 0);
    std::vector<double> ready(n_);  // when each worker's current gradient is pushed
    auto cycle = [&](int w) { return timing_.compute_s[w] + timing_.communication_s; };
    const long bound = std::max(1, c_.staleness);  // 0 would let no worker go past the slowest
    const double t0 = t_;
    const long step0 = step_;
    for (int w = 0; w < n_; ++w) ready[w] = t0 + cycle(w);
    if (r_.curve.empty()) evaluate(p);
    const long max_pushes = static_cast<long>(c_.max_steps - step0) * n_;
    auto slowest = [&] {
      long s = LONG_MAX;
      for (int w : live()) s = std::min(s, done[w]);
      return s;
    };
    auto release = [&](double now) {  // whoever waited may go once the slowest has caught up
      const long low = slowest();
      for (int k : live())
        if (!std::isfinite(ready[k]) && done[k] - low < bound) {
          pulled[k] = p;
          pulled_version[k] = version;
          ready[k] = now + cycle(k);
        }
    };
    while (pushes < max_pushes) {
      const std::vector<int> on = live();
      if (on.empty()) break;
      int w = on[0];
      for (int k : on)
        if (ready[k] < ready[w]) w = k;
      if (const WorkerFailure* f = failure_before(ready[w])) {
        if (recover(*f, true)) {
          // Everyone rolls back to the server's checkpoint and pulls it after the restart.
          r_.steps_lost += (pushes - saved_pushes) / n_;
          p = saved;
          saved_pushes = pushes;
          for (int k : live()) pulled[k] = p, pulled_version[k] = version, ready[k] = t_ + cycle(k);
          if (evaluate(p)) break;
        } else {
          ready[f->worker] = INFINITY;
          release(f->at_s);
        }
        continue;
      }
      const double now = ready[w];
      p -= c_.learning_rate / n_ * wire_.send(w, gradient(w, pulled[w]), worker_rng_[w]);
      staleness_sum_ += static_cast<double>(version - pulled_version[w]);
      ++staleness_count_;
      ++version;
      ++pushes;
      ++done[w];
      pulled[w] = p;
      pulled_version[w] = version;
      ready[w] = done[w] - slowest() >= bound ? INFINITY : now + cycle(w);
      release(now);
      if (pushes % n_ == 0) {
        t_ = now;
        step_ = step0 + pushes / n_;
        if (checkpoint_due(pushes / n_)) saved = p, saved_pushes = pushes;
        if ((eval_due() || pushes == max_pushes) && evaluate(p)) break;
      }
    }
  }

  const ConvergenceConfig& c_;
  const WorkerTiming& timing_;
  const int n_;
  const Data data_;
  const Model model_;
  Wire wire_;
  std::vector<bool> alive_;
  int spares_;
  std::vector<WorkerFailure> failures_;
  size_t next_failure_ = 0;
  VectorXd start_;
  std::vector<Rng> worker_rng_;
  std::vector<int> all_valid_, zeno_rows_;
  ConvergenceResult r_;
  double t_ = 0, t_base_ = 0;  // the simulated clock; where it stood at the last restart
  long step_ = 0, step_base_ = 0;  // steps computed, lost ones included
  double staleness_sum_ = 0;
  long staleness_count_ = 0;
};

}  // namespace

void check_config(const ConvergenceConfig& c) {
  auto bad = [](const char* option, const std::string& problem) { throw ConfigError(SourceLoc{option, 0, 0}, "", problem); };
  const double elements = static_cast<double>(c.workers) * c.data.samples_per_worker * c.data.dim;
  if (elements > 1e8)
    bad("--data", "workers x samples x dim = " + std::to_string(static_cast<long long>(elements)) +
                      " numbers of training data; at most 1e8 (fewer samples or a smaller dim)");
  if (c.batch > c.data.samples_per_worker)
    bad("--batch", std::to_string(c.batch) + " samples per step from a shard of " + std::to_string(c.data.samples_per_worker) +
                       "; valid: 1 to the shard's samples (--data samples=N)");
  const int n = c.workers, b = c.trim;
  if (c.aggregator == "trimmed" && 2 * b >= n)
    bad("--trim", std::to_string(b) + " dropped from each end of " + std::to_string(n) + " workers; valid: 0 to " + std::to_string((n - 1) / 2));
  if (c.aggregator == "krum" && n <= 2 * b + 2)
    bad("--trim", "Krum needs more than 2b + 2 workers; with " + std::to_string(n) + ", b is at most " + std::to_string((n - 3) / 2));
  if (c.aggregator == "zeno" && b >= n)
    bad("--trim", std::to_string(b) + " suspects among " + std::to_string(n) + " workers; valid: 0 to " + std::to_string(n - 1));
}

ConvergenceResult train_to_target(const ConvergenceConfig& c, const WorkerTiming& timing, const std::string& name) {
  check_config(c);
  return Trainer(c, timing, name).run();
}

double gradient_check(const std::string& kind, int dim, int classes, int hidden, unsigned long long seed) {
  ConvergenceData d;
  d.dim = dim;
  d.classes = classes;
  d.samples_per_worker = 16;
  d.seed = seed;
  const Data data = make_data(d, 1);
  const Model model(kind, dim, classes, hidden);
  Rng rng(seed);
  const VectorXd p = model.init(rng);
  std::vector<int> rows(16);
  std::iota(rows.begin(), rows.end(), 0);
  VectorXd g;
  model.loss(p, data.x[0], data.y[0], rows, &g);
  double worst = 0;
  for (int i = 0; i < model.size(); ++i) {
    VectorXd a = p, b = p;
    const double h = 1e-5;
    a[i] += h;
    b[i] -= h;
    const double fd = (model.loss(a, data.x[0], data.y[0], rows, nullptr) - model.loss(b, data.x[0], data.y[0], rows, nullptr)) / (2 * h);
    worst = std::max(worst, std::fabs(fd - g[i]) / std::max(1e-4, std::fabs(fd) + std::fabs(g[i])));
  }
  return worst;
}



}  // namespace dejavu::strategies
