// rl: a policy-gradient searcher (REINFORCE, Williams 1992; as Mirhoseini et al. 2017 place
// operations): a policy of independent softmaxes, one per knob of the grid's space (space.h:
// tensor, context and pipeline degrees, microbatch, schedule, recomputation, ZeRO stage, SP,
// ep, offload), samples plans in batches of kBatch (choices that make no plan drawn again);
// each plan's reward is minus its log iteration time (a plan that does not fit earns the log
// of twice the slowest time seen, below every plan that fits), and each knob's logits move
// along (reward - baseline) x the gradient of the sample's log-probability, the baseline a
// moving average of rewards. Seeded; `iterations` plans sampled (default kDefaultIterations);
// the evaluator's cache makes a plan sampled twice free.
#include <algorithm>
#include <cmath>
#include <random>

#include "strategies/search/polish.h"
#include "strategies/search/searchers.h"
#include "strategies/search/space.h"

namespace dejavu::strategies::search {

namespace {

constexpr double kRate = 0.1;   // logits' step per unit of advantage
constexpr double kDecay = 0.9;  // the baseline's memory, per batch
constexpr int kRedraws = 64;    // draws for one sample that makes a plan

struct Knob {
  std::vector<double> logits;
  size_t sample(std::mt19937_64& rng) const {
    std::vector<double> p = probabilities();
    double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    for (size_t i = 0; i < p.size(); ++i)
      if ((u -= p[i]) < 0) return i;
    return p.size() - 1;
  }
  std::vector<double> probabilities() const {
    const double top = *std::max_element(logits.begin(), logits.end());
    std::vector<double> p;
    double sum = 0;
    for (double l : logits) sum += p.emplace_back(std::exp(l - top));
    for (double& x : p) x /= sum;
    return p;
  }
  void step(size_t chosen, double advantage) {
    const std::vector<double> p = probabilities();
    for (size_t i = 0; i < logits.size(); ++i) logits[i] += kRate * advantage * ((i == chosen ? 1 : 0) - p[i]);
  }
};

enum { kTp, kCp, kPp, kMb, kSchedule, kRecompute, kZero, kSp, kEp, kOffload, kKnobs };

// The plan a sample of knob choices makes, or false when they do not make one.
bool plan_of(const Problem& problem, const Space& s, const std::vector<size_t>& c, Plan& out) {
  if (!make_plan(problem, s.tp[c[kTp]], s.pp[c[kPp]], s.micro_batch[c[kMb]], out, s.cp[c[kCp]])) return false;
  out.schedule = out.pp == 1 ? "1f1b" : s.schedules[c[kSchedule]];
  out.virtual_stages = out.schedule == "interleaved-1f1b" ? s.chunks.front() : 1;
  if (out.virtual_stages > 1 && (out.total_stages() > problem.model->layers || out.microbatches() % out.pp != 0))
    return false;
  out.recompute = s.recompute[c[kRecompute]];
  out.zero = out.dp == 1 ? 0 : s.zero[c[kZero]];
  out.sequence_parallel = out.tp > 1 && s.sequence_parallel[c[kSp]];
  out.ep = s.ep[c[kEp]];
  out.offload_optimizer = s.offload[c[kOffload]];
  out.cp_comm = out.cp > 1 ? "ring" : "all-gather";
  return out.dp % out.ep == 0;
}

}  // namespace

SearchResult ReinforceSearcher::search(const Problem& problem, Evaluator& evaluator,
                                       const SearchOptions& options) const {
  Tracker tracker("rl", problem, evaluator, options);
  Space space = default_space(problem);
  space.micro_batch = micro_batch_options(problem, space, 1, 1);  // with each replica's whole batch at dp = N
  const size_t sizes[kKnobs] = {
      space.tp.size(),        space.cp.size(),        space.pp.size(),   space.micro_batch.size(),
      space.schedules.size(), space.recompute.size(), space.zero.size(), space.sequence_parallel.size(),
      space.ep.size(),        space.offload.size()};
  std::vector<Knob> knobs;
  for (size_t n : sizes) knobs.push_back(Knob{std::vector<double>(n, 0.0)});
  const long samples = options.iterations > 0 ? options.iterations : kDefaultIterations;
  std::mt19937_64 rng(options.seed);
  double baseline = 0, worst = 0;
  bool started = false;
  long drawn = 0;
  while (drawn < samples && !tracker.out_of_time()) {
    std::vector<std::pair<std::vector<size_t>, double>> batch;  // choices, log seconds
    for (int b = 0; b < kBatch && drawn < samples; ++b, ++drawn) {
      // Choices that make no plan (degrees that do not cover the batch) are drawn again, up
      // to kRedraws times: the policy learns from plans.
      std::vector<size_t> c;
      Plan plan;
      bool made = false;
      for (int tries = 0; tries < kRedraws && !made; ++tries) {
        c.clear();
        for (const Knob& k : knobs) c.push_back(k.sample(rng));
        made = plan_of(problem, space, c, plan);
      }
      const double cost = made ? tracker.evaluate(plan).cost() : INFINITY;
      if (std::isfinite(cost)) worst = std::max(worst, std::log(cost));
      batch.push_back({c, std::log(cost)});
      tracker.progress(drawn + 1, samples);
    }
    double mean = 0, square = 0;
    for (auto& [c, reward] : batch) {
      reward = -(std::isfinite(reward) ? reward : worst + std::log(2.0));
      mean += reward / static_cast<double>(batch.size());
      square += reward * reward / static_cast<double>(batch.size());
    }
    if (!started) baseline = mean, started = true;
    // Advantages in units of the batch's spread, so the step does not depend on how far
    // apart the times happen to be.
    const double spread = std::sqrt(std::max(1e-12, square - mean * mean));
    for (const auto& [c, reward] : batch)
      for (int k = 0; k < kKnobs; ++k) knobs[k].step(c[k], (reward - baseline) / spread);
    baseline = kDecay * baseline + (1 - kDecay) * mean;
  }
  const long polished = polish(problem, default_space(problem), tracker);
  SearchResult r = tracker.finish();
  r.note = std::to_string(drawn) + " plans sampled by a policy learned with REINFORCE (seed " +
           std::to_string(options.seed) + "), then " + std::to_string(polished) + " plans near its best (polish.h)";
  return r;
}

}  // namespace dejavu::strategies::search
