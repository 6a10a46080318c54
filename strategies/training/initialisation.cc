// Parallel random initialisation (Trainer::choose_start): seeded candidate weights, each
// trained synchronously by its share of the workers for a few probe steps; the best (and,
// optionally, kept runners-up and perturbations of the best) probe again; every worker goes
// on from the winner.
#include <algorithm>
#include <cmath>

#include "sim/error.h"
#include "strategies/training/trainer.h"

namespace dejavu::strategies::convergence {

VectorXd Trainer::choose_start() {
  const int K = c_.init_candidates;
  if (K <= 1) return start_;
  if (K > n_)
    throw ConfigError(SourceLoc{"--init-candidates", 0, 0}, "",
                      std::to_string(K) + " initialisations need as many workers; the plan has " + std::to_string(n_));
  std::vector<VectorXd> cand{start_};
  for (int k = 1; k < K; ++k) cand.push_back(initial_weights(k));
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

// Each candidate is trained synchronously by the workers w with w % candidates == its
// index, all candidates at once: a probe step takes one iteration.
void Trainer::probe(std::vector<VectorXd>& ps) {
  const int m = static_cast<int>(ps.size());
  for (int s = 0; s < c_.probe_steps && step_ < c_.max_steps && !r_.reached; ++s) {
    for (int k = 0; k < m; ++k) {
      std::vector<VectorXd> gs;
      for (int w = k; w < n_; w += m) gs.push_back(sent_gradient(w, ps[k]));
      ps[k] -= c_.learning_rate * aggregate(gs, ps[k]);
    }
    advance(timing_.iteration_s);
    if (eval_due()) evaluate(best_of(ps).second);
  }
}

std::pair<int, VectorXd> Trainer::best_of(const std::vector<VectorXd>& ps) const {
  int pick = 0;
  double best = INFINITY;
  for (size_t k = 0; k < ps.size(); ++k)
    if (const double l = validation_loss(ps[k]); l < best) best = l, pick = static_cast<int>(k);
  return {pick, ps[pick]};
}

}  // namespace dejavu::strategies::convergence
