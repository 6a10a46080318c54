#include "strategies/lowering/token_slices.h"

#include <algorithm>
#include <limits>

#include "strategies/lowering/prices.h"
#include "workloads/token_slice.h"

namespace dejavu::strategies::lowering {

double cut_objective(const std::vector<int>& cut, const std::function<double(int, int)>& time, int m, int p) {
  double sum = 0, most = 0;
  for (size_t i = 0; i + 1 < cut.size(); ++i) {
    const double t = time(cut[i], cut[i + 1]);
    sum += t;
    most = std::max(most, t);
  }
  return m * sum + (p - 1) * most;
}

std::vector<int> best_cut(int n, const std::function<double(int, int)>& time, int m, int p) {
  std::vector<std::vector<double>> t(n + 1, std::vector<double>(n + 1, 0));
  std::vector<double> candidates;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b <= n; ++b) candidates.push_back(t[a][b] = time(a, b));
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  const double inf = std::numeric_limits<double>::infinity();
  double best = inf;
  std::vector<int> out;
  for (double cap : candidates) {
    if ((p - 1) * cap >= best) break;  // the bubble alone already costs more
    std::vector<double> f(n + 1, inf);
    std::vector<int> from(n + 1, -1);
    f[0] = 0;
    for (int b = 1; b <= n; ++b)
      for (int a = 0; a < b; ++a)
        if (t[a][b] <= cap && f[a] + t[a][b] < f[b]) f[b] = f[a] + t[a][b], from[b] = a;
    if (f[n] == inf || m * f[n] + (p - 1) * cap >= best) continue;
    best = m * f[n] + (p - 1) * cap;
    out.clear();
    for (int b = n; b > 0; b = from[b]) out.push_back(b);
    out.push_back(0);
    std::reverse(out.begin(), out.end());
  }
  return out;
}

namespace {
// One forward and backward of the slice of tokens [o, o + l) on GPU stage `stage`.
double slice_time(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                  const std::string& algorithm, int stage, double o, double l) {
  const workloads::ModelGraph sliced = workloads::token_slice(model, o, l);
  const std::vector<StageWork> work = build_stage_work(sliced, plan);
  GroupPricer pricer(sliced, cluster, plan, stage, 0, algorithm);
  double t = 0;
  for (const Block& blk : work.at(stage).blocks) {
    const BlockItems b = pricer.block(blk);
    t += b.fwd.duration_s + b.bwd.duration_s;
  }
  return t;
}

std::vector<int> chosen_lengths(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                                const std::string& algorithm) {
  const int s = static_cast<int>(model.tokens_per_sample);
  int heaviest = 0;
  double most = -1;
  for (int st = 0; st < plan.pp; ++st) {
    const double t = slice_time(model, cluster, plan, algorithm, st, 0, s);
    if (t > most) most = t, heaviest = st;
  }
  const int n = std::min(s, 32);
  auto unit = [&](int i) { return static_cast<int>(static_cast<long long>(s) * i / n); };
  const auto cut = best_cut(
      n,
      [&](int a, int b) { return slice_time(model, cluster, plan, algorithm, heaviest, unit(a), unit(b) - unit(a)); },
      plan.microbatches(), plan.pp);
  std::vector<int> lengths;
  for (size_t i = 0; i + 1 < cut.size(); ++i) lengths.push_back(unit(cut[i + 1]) - unit(cut[i]));
  return lengths;
}
}  // namespace

TokenSlices token_slices(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                         const std::string& collective_algorithm) {
  TokenSlices out;
  const int s = static_cast<int>(model.tokens_per_sample);
  if (!plan.token_slices.empty()) {
    out.lengths = plan.token_slices;
  } else if (plan.token_slice_count > 0) {
    const int k = plan.token_slice_count;
    for (int i = 0; i < k; ++i) out.lengths.push_back(s / k + (i < s % k ? 1 : 0));
  } else {
    out.lengths = chosen_lengths(model, cluster, plan, collective_algorithm);
    out.chosen = true;
  }
  double offset = 0;
  for (int l : out.lengths) {
    out.models.push_back(workloads::token_slice(model, offset, l));
    out.work.push_back(build_stage_work(out.models.back(), plan));
    offset += l;
  }
  return out;
}

}  // namespace dejavu::strategies::lowering
