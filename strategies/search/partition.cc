#include "strategies/search/partition.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "strategies/lowering.h"

namespace dejavu::strategies::search {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// Prefix sums per stage, so a stage's time and memory over layers [i, j) are O(1).
struct Prefix {
  std::vector<std::vector<double>> time, bytes;
  explicit Prefix(const PartitionProblem& pr) {
    const int L = pr.layers();
    time.assign(pr.stages, std::vector<double>(L + 1, 0));
    bytes.assign(pr.stages, std::vector<double>(L + 1, 0));
    for (int s = 0; s < pr.stages; ++s)
      for (int l = 0; l < L; ++l) {
        time[s][l + 1] = time[s][l] + pr.layer_s[s][l];
        bytes[s][l + 1] = bytes[s][l] + (pr.layer_bytes.empty() ? 0 : pr.layer_bytes[s][l]);
      }
  }
};

double stage_time(const PartitionProblem& pr, const Prefix& px, int s, int i, int j) {
  return pr.fixed_s[s] + px.time[s][j] - px.time[s][i];
}
bool stage_fits(const PartitionProblem& pr, const Prefix& px, int s, int i, int j) {
  if (pr.capacity_bytes.empty() || pr.capacity_bytes[s] <= 0) return true;
  const double fixed = pr.fixed_bytes.empty() ? 0 : pr.fixed_bytes[s];
  return fixed + px.bytes[s][j] - px.bytes[s][i] <= pr.capacity_bytes[s];
}

// Least sum of stage times with every stage at most `bound`; fills `cuts` (stage ends).
double min_sum(const PartitionProblem& pr, const Prefix& px, double bound, std::vector<int>* cuts) {
  const int p = pr.stages, L = pr.layers();
  std::vector<std::vector<double>> F(p, std::vector<double>(L + 1, kInf));
  std::vector<std::vector<int>> from(p, std::vector<int>(L + 1, -1));
  for (int j = 1; j <= L - (p - 1); ++j)
    if (stage_time(pr, px, 0, 0, j) <= bound && stage_fits(pr, px, 0, 0, j)) F[0][j] = stage_time(pr, px, 0, 0, j);
  for (int s = 1; s < p; ++s)
    for (int j = s + 1; j <= L - (p - 1 - s); ++j)
      for (int i = s; i < j; ++i) {
        if (F[s - 1][i] == kInf) continue;
        const double t = stage_time(pr, px, s, i, j);
        if (t > bound || !stage_fits(pr, px, s, i, j)) continue;
        if (F[s - 1][i] + t < F[s][j]) {
          F[s][j] = F[s - 1][i] + t;
          from[s][j] = i;
        }
      }
  if (cuts && F[p - 1][L] < kInf) {
    cuts->assign(p, 0);
    int j = L;
    for (int s = p - 1; s >= 0; --s) {
      (*cuts)[s] = j;
      j = s > 0 ? from[s][j] : 0;
    }
  }
  return F[p - 1][L];
}

std::vector<int> sizes_of(const std::vector<int>& cuts) {
  std::vector<int> out;
  int prev = 0;
  for (int c : cuts) {
    out.push_back(c - prev);
    prev = c;
  }
  return out;
}
}  // namespace

double partition_objective(const PartitionProblem& pr, const std::vector<int>& sizes) {
  if (static_cast<int>(sizes.size()) != pr.stages) return kInf;
  const Prefix px(pr);
  double sum = 0, worst = 0;
  int i = 0;
  for (int s = 0; s < pr.stages; ++s) {
    if (sizes[s] <= 0) return kInf;
    const int j = i + sizes[s];
    if (j > pr.layers() || !stage_fits(pr, px, s, i, j)) return kInf;
    const double t = stage_time(pr, px, s, i, j);
    sum += t;
    worst = std::max(worst, t);
    i = j;
  }
  if (i != pr.layers()) return kInf;
  return sum + (pr.microbatches - 1) * worst;
}

Partition alpa_partition(const PartitionProblem& pr, const std::function<bool()>& stop) {
  Partition best;
  const int p = pr.stages, L = pr.layers();
  if (p < 1 || L < p) return best;
  const Prefix px(pr);
  std::vector<int> cuts;
  const double floor_sum = min_sum(pr, px, kInf, &cuts);  // no bound: the least sum there is
  if (floor_sum == kInf) return best;
  if (pr.microbatches == 1) {  // the objective is the sum alone
    best.layers_per_stage = sizes_of(cuts);
    best.objective_s = partition_objective(pr, best.layers_per_stage);
    return best;
  }
  std::vector<double> bounds;
  for (int s = 0; s < p; ++s)
    for (int i = s; i < L; ++i)
      for (int j = i + 1; j <= L - (p - 1 - s); ++j)
        if (stage_fits(pr, px, s, i, j)) bounds.push_back(stage_time(pr, px, s, i, j));
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  // The smallest bound any partition meets, by bisection (feasibility grows with the bound).
  size_t lo = 0, hi = bounds.size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (min_sum(pr, px, bounds[mid], nullptr) < kInf)
      hi = mid;
    else
      lo = mid + 1;
  }
  const double B1 = pr.microbatches - 1;
  for (size_t k = lo; k < bounds.size(); ++k) {
    if (floor_sum + B1 * bounds[k] >= best.objective_s) break;  // no larger bound can win
    if (stop && stop()) return Partition{};
    const double sum = min_sum(pr, px, bounds[k], &cuts);
    if (sum == kInf) continue;
    const std::vector<int> sizes = sizes_of(cuts);
    const double objective = partition_objective(pr, sizes);  // its real slowest stage
    if (objective < best.objective_s) {
      best.objective_s = objective;
      best.layers_per_stage = sizes;
    }
  }
  return best;
}

namespace {
// Each layer's softmax over stages at temperature tau, and its expected stage.
void soft_assignment(const std::vector<std::vector<double>>& alpha, double tau, std::vector<std::vector<double>>& pi,
                     std::vector<double>& E) {
  const int L = static_cast<int>(alpha.size()), p = L > 0 ? static_cast<int>(alpha[0].size()) : 0;
  for (int l = 0; l < L; ++l) {
    double mx = -kInf, z = 0;
    for (int s = 0; s < p; ++s) mx = std::max(mx, alpha[l][s] / tau);
    for (int s = 0; s < p; ++s) z += (pi[l][s] = std::exp(alpha[l][s] / tau - mx));
    E[l] = 0;
    for (int s = 0; s < p; ++s) {
      pi[l][s] /= z;
      E[l] += s * pi[l][s];
    }
  }
}

// Logits that start near the even split (the stage an even cut would give each layer), seeded noise on top.
std::vector<std::vector<double>> initial_logits(int L, int p, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.1);
  std::vector<std::vector<double>> alpha(L, std::vector<double>(p));
  for (int l = 0; l < L; ++l)
    for (int s = 0; s < p; ++s) {
      const double even = (l + 0.5) * p / L - 0.5;
      alpha[l][s] = -0.5 * (s - even) * (s - even) + noise(rng);
    }
  return alpha;
}

std::vector<int> expected_sizes(const std::vector<std::vector<double>>& pi, int p) {
  const int L = static_cast<int>(pi.size());
  // Discretise: each stage gets its expected number of layers under the final softmax
  // (largest remainders, each at least one), cut contiguously in order. Per-layer argmax
  // is the textbook DARTS step; on runs of equal layers it flips boundary layers at random,
  // while the expected counts are what the descent actually balanced.
  std::vector<double> soft(p, 0.0);
  for (int l = 0; l < L; ++l)
    for (int s = 0; s < p; ++s) soft[s] += pi[l][s];
  std::vector<int> sizes(p, 1);
  int left = L - p;
  std::vector<double> want(p);
  for (int s = 0; s < p; ++s) want[s] = std::max(0.0, soft[s] - 1);
  double total_want = 0;
  for (double w : want) total_want += w;
  std::vector<std::pair<double, int>> remainder;
  for (int s = 0; s < p; ++s) {
    const double share = total_want > 0 ? want[s] * left / total_want : static_cast<double>(left) / p;
    const int whole = static_cast<int>(std::floor(share));
    sizes[s] += whole;
    remainder.emplace_back(-(share - whole), s);
  }
  int placed = 0;
  for (int x : sizes) placed += x;
  std::sort(remainder.begin(), remainder.end());
  for (int k = 0; placed < L; ++k, ++placed) sizes[remainder[k % p].second]++;
  return sizes;
}
}  // namespace

Partition differentiable_partition(const PartitionProblem& pr, const DiffOptions& o) {
  Partition out;
  const int p = pr.stages, L = pr.layers();
  if (p < 1 || L < p) return out;
  // Normalise times by the mean stage time, memory by capacity, so one set of weights suits
  // every problem.
  double total = 0;
  for (int l = 0; l < L; ++l) {
    double mean = 0;
    for (int s = 0; s < p; ++s) mean += pr.layer_s[s][l] / p;
    total += mean;
  }
  for (int s = 0; s < p; ++s) total += pr.fixed_s[s];
  const double unit = total / p;  // seconds per "1"
  const double B1 = pr.microbatches - 1;
  const double scale = 1.0 / (p + B1);  // the surrogate ~ 1 at an even split
  const double kappa = 30;              // LSE sharpness, in mean stage times
  const double lambda_memory = 50, lambda_order = 5;
  std::vector<std::vector<double>> alpha = initial_logits(L, p, o.seed), m1(L, std::vector<double>(p)), m2 = m1;
  std::vector<std::vector<double>> pi(L, std::vector<double>(p)), grad(L, std::vector<double>(p));
  std::vector<double> T(p), M(p), gT(p), gM(p), E(L), gE(L);
  const double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  for (int step = 1; step <= o.steps; ++step) {
    if (o.stop && step % 16 == 0 && o.stop()) return out;
    const double tau = std::pow(0.05, static_cast<double>(step - 1) / std::max(1, o.steps - 1));
    soft_assignment(alpha, tau, pi, E);
    for (int s = 0; s < p; ++s) {
      T[s] = pr.fixed_s[s] / unit;
      M[s] = pr.fixed_bytes.empty() ? 0 : pr.fixed_bytes[s];
      for (int l = 0; l < L; ++l) {
        T[s] += pi[l][s] * pr.layer_s[s][l] / unit;
        if (!pr.layer_bytes.empty()) M[s] += pi[l][s] * pr.layer_bytes[s][l];
      }
    }
    // d surrogate / d T_s: 1 from the sum, (B-1) softmax(kappa T)_s from the smooth max.
    double mx = -kInf, z = 0;
    for (int s = 0; s < p; ++s) mx = std::max(mx, kappa * T[s]);
    for (int s = 0; s < p; ++s) z += std::exp(kappa * T[s] - mx);
    for (int s = 0; s < p; ++s) {
      gT[s] = scale * (1 + B1 * std::exp(kappa * T[s] - mx) / z);
      const double cap = pr.capacity_bytes.empty() ? 0 : pr.capacity_bytes[s];
      // The memory penalty hardens as the assignment sharpens (tau falls).
      gM[s] = cap > 0 && M[s] > cap ? 2 * lambda_memory / tau * (M[s] - cap) / (cap * cap) : 0;
    }
    // Order: a layer's expected stage should not exceed the next layer's.
    std::fill(gE.begin(), gE.end(), 0.0);
    for (int l = 0; l + 1 < L; ++l) {
      const double over = std::max(0.0, E[l] - E[l + 1]);
      gE[l] += 2 * lambda_order * over;
      gE[l + 1] -= 2 * lambda_order * over;
    }
    for (int l = 0; l < L; ++l) {
      double dot = 0;
      for (int s = 0; s < p; ++s) {
        grad[l][s] =
            gT[s] * pr.layer_s[s][l] / unit + gE[l] * s + (pr.layer_bytes.empty() ? 0 : gM[s] * pr.layer_bytes[s][l]);
        dot += pi[l][s] * grad[l][s];
      }
      for (int s = 0; s < p; ++s) {
        const double g = pi[l][s] * (grad[l][s] - dot) / tau;  // through the softmax
        m1[l][s] = beta1 * m1[l][s] + (1 - beta1) * g;
        m2[l][s] = beta2 * m2[l][s] + (1 - beta2) * g * g;
        const double mh = m1[l][s] / (1 - std::pow(beta1, step)), vh = m2[l][s] / (1 - std::pow(beta2, step));
        alpha[l][s] -= o.learning_rate * mh / (std::sqrt(vh) + eps);
      }
    }
  }
  const std::vector<int> sizes = expected_sizes(pi, p);
  out.layers_per_stage = sizes;
  out.objective_s = partition_objective(pr, sizes);
  if (out.objective_s == kInf) out.layers_per_stage.clear();
  return out;
}

PartitionProblem partition_problem(const Problem& problem, const Plan& plan, const std::string& algorithm) {
  const auto& model = *problem.model;
  const auto& cluster = *problem.cluster;
  const int p = plan.pp, v = plan.virtual_stages, V = plan.total_stages(), m = plan.microbatches();
  PartitionProblem pr;
  pr.stages = V;
  pr.microbatches = m;
  const double per_param = model_state_per_param(model.dtype, plan, plan.zero_shards()).total();
  std::map<std::string, std::vector<BlockCost>> priced;  // stages on the same GPUs price alike
  for (int vs = 0; vs < V; ++vs) {
    const int s = vs % p;  // the GPU stage running virtual stage vs
    std::string sig;
    double capacity = 0;
    for (int k = 0; k < plan.tp * plan.cp; ++k) {
      const auto& slot = cluster.gpus.at(gpu_index(plan, s, 0, k));
      sig += slot.spec->name + ",";
      capacity = capacity == 0 ? slot.spec->memory_bytes : std::min(capacity, slot.spec->memory_bytes);
    }
    if (plan.tp > 1) {
      const auto ring = cluster.network.path_cost(cluster.gpus[gpu_index(plan, s, 0, 0)].host,
                                                  cluster.gpus[gpu_index(plan, s, 0, 1)].host);
      sig += std::to_string(ring.bottleneck_Bps) + "/" + std::to_string(ring.latency_s);
    }
    sig += "/" + plan.recompute_of(s);
    auto it = priced.find(sig);
    if (it == priced.end()) it = priced.emplace(sig, block_costs(model, cluster, plan, s, algorithm)).first;
    const std::vector<BlockCost>& blocks = it->second;
    // Microbatches whose activations a stage holds: all of them under GPipe, else as 1F1B.
    const double in_flight = plan.schedule == "gpipe" ? m : std::min(p - s, m);
    std::vector<double> times, bytes;
    double fixed = 0, fixed_bytes = 0, transient = 0;
    bool seen_layer = false;
    for (const BlockCost& b : blocks) {
      transient = std::max(transient, b.transient_bytes);
      const double mem = b.params_per_gpu * per_param + in_flight * b.stored_bytes;
      if (b.is_layer) {
        seen_layer = true;
        times.push_back(b.time_s);
        bytes.push_back(mem);
      } else if ((!seen_layer && vs == 0) || (seen_layer && vs == V - 1)) {
        fixed += b.time_s;  // the ops before the layers run on the first stage, after on the last
        fixed_bytes += mem;
      }
    }
    pr.layer_s.push_back(times);
    pr.layer_bytes.push_back(bytes);
    pr.fixed_s.push_back(fixed);
    pr.fixed_bytes.push_back(fixed_bytes + transient);
    pr.capacity_bytes.push_back(capacity / v);  // a GPU's chunks share it
  }
  return pr;
}

}  // namespace dejavu::strategies::search
