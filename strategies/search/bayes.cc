// bo: Bayesian optimisation over the knobs (Snoek et al. 2012, as Metis and Galvatron-style
// planners use it): the plans of the grid's space (space.h), each a point of [0, 1]^14 (log
// degrees, microbatch, how context ranks share keys and values, schedule, recomputation,
// ZeRO stage, SP, offload), a Gaussian process
// with a squared-exponential kernel on the log iteration times seen so far, and the next
// plan scored the unseen one of highest expected improvement. A plan that does not fit counts
// as twice the slowest time seen. Starts from plans drawn with the seed (SMAC's initial design:
// 10 per feature, at most a quarter of the budget); stops after
// `iterations` scores (default kDefaultIterations) or when every plan is scored.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>

#include "strategies/recompute_modes.h"
#include "strategies/search/polish.h"
#include "strategies/search/searchers.h"
#include "strategies/search/space.h"

namespace dejavu::strategies::search {

namespace {

constexpr double kLength = 0.8;  // the kernel's length scale, in units of a knob's range
constexpr double kNoise = 1e-6;  // jitter on the diagonal (scores are deterministic)

Eigen::VectorXd features(const Plan& p) {
  const std::vector<std::string> schedules = {"1f1b", "gpipe", "interleaved-1f1b", "zb-h1"};
  const double s = static_cast<double>(std::find(schedules.begin(), schedules.end(), p.schedule) - schedules.begin());
  Eigen::VectorXd x(14);
  const double rc = recompute_replayed(p.recompute);
  x << std::log2(p.tp) / 3, std::log2(p.pp) / 6, std::log2(p.dp) / 10, std::log2(p.micro_batch_size) / 12,
      std::log2(p.ep) / 6, std::log2(p.cp) / 3, p.cp_comm == "ring" ? 1.0 : 0.0, s == 1 ? 1.0 : 0.0, s == 2 ? 1.0 : 0.0,
      s == 3 ? 1.0 : 0.0, rc, p.zero / 3.0, p.sequence_parallel ? 1.0 : 0.0, p.offload_optimizer.empty() ? 0.0 : 1.0;
  return x;
}

double kernel(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return std::exp(-(a - b).squaredNorm() / (2 * kLength * kLength));
}

// The Gaussian process on the scored points: expected improvement below `best` (all in the
// standardised log-time the process is fitted on) at every unscored plan; the index of the
// highest, or -1 when none is left.
long next_plan(const std::vector<Eigen::VectorXd>& x, const std::vector<long>& seen, const std::vector<double>& y,
               const std::vector<char>& scored) {
  const Eigen::Index n = static_cast<Eigen::Index>(seen.size());
  Eigen::VectorXd t(n);
  for (Eigen::Index i = 0; i < n; ++i) t(i) = y[static_cast<size_t>(i)];
  const double mean = t.mean(), sd = std::max(1e-9, std::sqrt((t.array() - mean).square().mean()));
  t = (t.array() - mean) / sd;
  Eigen::MatrixXd k(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) k(i, j) = kernel(x[seen[i]], x[seen[j]]) + (i == j ? kNoise : 0);
  const Eigen::LLT<Eigen::MatrixXd> llt(k);
  const Eigen::VectorXd alpha = llt.solve(t);
  const double best = t.minCoeff();
  std::vector<long> open;
  for (size_t c = 0; c < x.size(); ++c)
    if (!scored[c]) open.push_back(static_cast<long>(c));
  if (open.empty()) return -1;
  // Every open plan at once: cross-covariances, then L^-1 of them for the variances.
  Eigen::MatrixXd ks(n, static_cast<Eigen::Index>(open.size()));
  for (Eigen::Index c = 0; c < ks.cols(); ++c)
    for (Eigen::Index i = 0; i < n; ++i) ks(i, c) = kernel(x[open[static_cast<size_t>(c)]], x[seen[i]]);
  const Eigen::VectorXd mu = ks.transpose() * alpha;
  llt.matrixL().solveInPlace(ks);
  long pick = -1;
  double pick_ei = -1;
  for (Eigen::Index c = 0; c < ks.cols(); ++c) {
    const double var = std::max(1e-12, 1 + kNoise - ks.col(c).squaredNorm());
    const double sd_c = std::sqrt(var), z = (best - mu(c)) / sd_c;
    const double ei =
        (best - mu(c)) * 0.5 * std::erfc(-z / std::sqrt(2.0)) + sd_c * std::exp(-z * z / 2) / std::sqrt(2 * M_PI);
    if (ei > pick_ei) pick_ei = ei, pick = open[static_cast<size_t>(c)];
  }
  return pick;
}

}  // namespace

SearchResult BayesSearcher::search(const Problem& problem, Evaluator& evaluator, const SearchOptions& options) const {
  Tracker tracker("bo", problem, evaluator, options);
  const Space space = default_space(problem);
  const std::vector<Plan> plans = enumerate(problem, space);
  std::vector<Eigen::VectorXd> x;
  for (const Plan& p : plans) x.push_back(features(p));
  const long budget =
      std::min<long>(static_cast<long>(plans.size()), options.iterations > 0 ? options.iterations : kDefaultIterations);
  std::vector<char> scored(plans.size(), 0);
  std::vector<long> seen;
  std::vector<double> cost;  // log seconds; infinity: does not fit
  std::mt19937_64 rng(options.seed);
  auto score = [&](long c) {
    scored[static_cast<size_t>(c)] = 1;
    seen.push_back(c);
    cost.push_back(std::log(tracker.evaluate(plans[static_cast<size_t>(c)]).cost()));
    tracker.progress(static_cast<long>(seen.size()), budget);
  };
  const long features_n = x.empty() ? 0 : static_cast<long>(x[0].size());
  const long initial = std::min<long>(budget, std::max<long>(1, std::min(kInitialPerFeature * features_n, budget / 4)));
  while (static_cast<long>(seen.size()) < initial && !tracker.out_of_time()) {
    const long c = static_cast<long>(rng() % plans.size());
    if (!scored[static_cast<size_t>(c)]) score(c);
  }
  while (static_cast<long>(seen.size()) < budget && !tracker.out_of_time()) {
    double worst = 0;
    for (double v : cost) worst = std::isfinite(v) ? std::max(worst, v) : worst;
    std::vector<double> y;
    for (double v : cost) y.push_back(std::isfinite(v) ? v : worst + std::log(2.0));
    const long c = next_plan(x, seen, y, scored);
    if (c < 0) break;
    score(c);
  }
  const long polished = polish(problem, space, tracker);
  SearchResult r = tracker.finish();
  r.note = std::to_string(seen.size()) + " of " + std::to_string(plans.size()) +
           " plans scored, chosen by a Gaussian process's expected improvement (seed " + std::to_string(options.seed) +
           "), then " + std::to_string(polished) + " plans near its best (polish.h)";
  return r;
}

}  // namespace dejavu::strategies::search
