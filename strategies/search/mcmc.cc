// mcmc: FlexFlow-style Metropolis-Hastings. The state is a whole plan; a proposal changes
// one knob (tensor or pipeline degree, microbatch, schedule, recomputation, ZeRO, SP,
// expert parallelism, optimizer offload; on long sequences context parallelism and how its
// ranks share keys and values) or moves one layer across a stage boundary (the per-layer
// placement). Energy is the
// iteration time; a plan that does not fit pays for its shortfall, so the chain can walk
// out of it. A proposal worse by a fraction x is accepted with probability
// exp(-x / kTemperature): with 0.02, 2% worse passes one time in e. Seeded; the evaluator's
// cache makes revisits free.
#include <cmath>
#include <random>

#include "strategies/search/polish.h"
#include "strategies/search/searchers.h"
#include "strategies/search/space.h"

namespace dejavu::strategies::search {

namespace {

double energy(const Score& s) {
  if (!s.valid) return std::numeric_limits<double>::infinity();
  const double over = s.capacity_bytes > 0 ? std::max(0.0, s.peak_memory_bytes / s.capacity_bytes - 1) : 0;
  if (!s.simulated) return 1e6 * (1 + over);  // pruned: hopeless, but some less than others
  return s.iteration_time_s * (s.fits ? 1 : 10 * (1 + over));
}

class Rng {
 public:
  explicit Rng(unsigned long long seed) : g_(seed) {}
  size_t below(size_t n) { return static_cast<size_t>(g_() % n); }  // same bytes everywhere
  double unit() { return static_cast<double>(g_() >> 11) * 0x1.0p-53; }

 private:
  std::mt19937_64 g_;
};

template <class T>
T other(const std::vector<T>& options, const T& current, Rng& rng) {
  if (options.size() < 2) return current;
  T pick = current;
  while (pick == current) pick = options[rng.below(options.size())];
  return pick;
}

std::vector<int> even_stages(int layers, int stages) {
  std::vector<int> out(stages, layers / stages);
  for (int s = 0; s < layers % stages; ++s) out[s]++;
  return out;
}

// One random change; false if it made no valid plan.
bool propose(const Problem& problem, const Space& space, const Plan& from, Plan& to, Rng& rng) {
  to = from;
  // Context parallelism's two moves only where the space has it (long sequences), so the
  // draws elsewhere are what they were before it was searched.
  const int move = static_cast<int>(rng.below(space.cp.size() > 1 ? 12 : 10));
  auto regrid = [&](int tp, int pp, int mb, int cp) {
    Plan base;
    if (!make_plan(problem, tp, pp, mb, base, cp)) return false;
    to.tp = tp;
    to.pp = pp;
    to.cp = cp;
    to.dp = base.dp;
    to.micro_batch_size = mb;
    to.stages.clear();
    if (to.pp == 1) {
      to.schedule = "1f1b";
      to.virtual_stages = 1;
    }
    if (to.dp == 1) to.zero = 0;
    if (to.tp == 1) to.sequence_parallel = false;
    if (to.dp % to.ep != 0) to.ep = 1;
    return true;
  };
  switch (move) {
    case 0:
      return regrid(other(space.tp, from.tp, rng), from.pp, from.micro_batch_size, from.cp);
    case 1:
      return regrid(from.tp, other(space.pp, from.pp, rng), from.micro_batch_size, from.cp);
    case 2:
      return regrid(from.tp, from.pp,
                    other(micro_batch_options(problem, space, from.tp, from.pp, from.cp), from.micro_batch_size, rng),
                    from.cp);
    case 3: {
      if (from.pp == 1) return false;
      to.schedule = other(space.schedules, from.schedule, rng);
      to.virtual_stages = to.schedule == "interleaved-1f1b" ? space.chunks[rng.below(space.chunks.size())] : 1;
      to.stages.clear();
      return to.pp * to.virtual_stages <= problem.model->layers &&
             (to.virtual_stages == 1 || to.microbatches() % to.pp == 0);
    }
    case 4:
      to.recompute = other(space.recompute, from.recompute, rng);
      return true;
    case 5:
      if (from.dp == 1) return false;
      to.zero = other(space.zero, from.zero, rng);
      return true;
    case 6:
      if (from.tp == 1) return false;
      to.sequence_parallel = !from.sequence_parallel;
      return true;
    case 7:
      to.ep = other(space.ep, from.ep, rng);
      return from.dp % to.ep == 0;
    case 8:
      to.offload_optimizer = other(space.offload, from.offload_optimizer, rng);
      return true;
    case 10:
      return regrid(from.tp, from.pp, from.micro_batch_size, other(space.cp, from.cp, rng));
    case 11:
      if (from.cp == 1) return false;
      to.cp_comm = other(space.cp_comm, from.cp_comm, rng);
      return true;
    default: {
      const int n = to.total_stages();
      if (n == 1) return false;
      if (to.stages.empty()) to.stages = even_stages(problem.model->layers, n);
      const int s = static_cast<int>(rng.below(n - 1));  // the boundary between s and s + 1
      const bool right = rng.below(2) == 0;
      int& give = right ? to.stages[s] : to.stages[s + 1];
      int& take = right ? to.stages[s + 1] : to.stages[s];
      if (give <= 1) return false;
      --give;
      ++take;
      return true;
    }
  }
}

}  // namespace

SearchResult McmcSearcher::search(const Problem& problem, Evaluator& evaluator, const SearchOptions& options) const {
  Tracker tracker("mcmc", problem, evaluator, options);
  const Space space = default_space(problem);
  const std::vector<Plan> all = enumerate(problem, space);
  Rng rng(options.seed);
  const long iterations = options.iterations > 0 ? options.iterations : kDefaultIterations;
  SearchResult empty;
  if (all.empty()) return tracker.finish();
  // Start from a seeded random plan of the space that is at least valid.
  Plan current = all[rng.below(all.size())];
  double e = energy(tracker.evaluate(current));
  for (int tries = 0; !std::isfinite(e) && tries < 100; ++tries) {
    current = all[rng.below(all.size())];
    e = energy(tracker.evaluate(current));
  }
  long accepted = 0, i = 0;
  for (; i < iterations; ++i) {
    if (tracker.out_of_time()) break;
    Plan next;
    if (propose(problem, space, current, next, rng)) {
      const double e2 = energy(tracker.evaluate(next));
      const double u = rng.unit();
      if (std::isfinite(e2) && (e2 <= e || u < std::exp(-(e2 - e) / (kTemperature * e)))) {
        current = next;
        e = e2;
        ++accepted;
      }
    }
    tracker.progress(i + 1, iterations);
  }
  const long polished = polish(problem, space, tracker);
  SearchResult r = tracker.finish();
  r.note = std::to_string(i) + " proposals, " + std::to_string(accepted) + " accepted (temperature " +
           std::to_string(kTemperature) + "), then " + std::to_string(polished) + " plans near its best (polish.h)";
  return r;
}

}  // namespace dejavu::strategies::search
