#include "strategies/search/polish.h"

#include <string>
#include <vector>

namespace dejavu::strategies::search {

namespace {

struct Knobs {
  int tp = 1, pp = 1, cp = 1, mb = 1, v = 1, zero = 0, ep = 1;
  std::string schedule = "1f1b", recompute = "none", cp_comm = "all-gather", offload;
  bool sp = false;
};

Knobs knobs_of(const Plan& p) {
  return {p.tp, p.pp,       p.cp,        p.micro_batch_size, p.virtual_stages,    p.zero,
          p.ep, p.schedule, p.recompute, p.cp_comm,          p.offload_optimizer, p.sequence_parallel};
}

// The plan the knobs make under enumerate()'s rules, or false. Knobs a mesh leaves without
// meaning are reset: ZeRO without replicas, SP without tensor ranks, a schedule the stages
// and microbatches do not allow (1f1b instead).
bool plan_of(const Problem& problem, const Space& space, const Knobs& k, Plan& out) {
  if (!make_plan(problem, k.tp, k.pp, k.mb, out, k.cp) || out.dp % k.ep != 0) return false;
  out.schedule = "1f1b";
  for (const auto& [name, v] : schedules_of(space, k.pp, out.microbatches(), problem.model->layers))
    if (name == k.schedule && (v == k.v || k.v == 1)) {
      out.schedule = name;
      out.virtual_stages = v;
      break;
    }
  out.ep = k.ep;
  out.cp_comm = k.cp > 1 ? k.cp_comm : "all-gather";
  out.recompute = k.recompute;
  out.zero = out.dp > 1 ? k.zero : 0;
  out.sequence_parallel = k.sp && k.tp > 1;
  out.offload_optimizer = k.offload;
  return true;
}

// Every mesh (tensor, pipeline, context and expert degrees at once: moving one alone
// rarely keeps a plan valid or better) with every microbatch, recomputation and sequence
// parallelism and the other knobs kept, and every setting of one other knob at a time.
std::vector<Knobs> neighbours(const Problem& problem, const Space& space, const Knobs& at) {
  std::vector<Knobs> out;
  for (int tp : space.tp)
    for (int pp : space.pp)
      for (int cp : space.cp)
        for (int ep : space.ep) {
          Knobs k = at;
          k.tp = tp, k.pp = pp, k.cp = cp, k.ep = ep;
          // with each microbatch, recomputation and SP: what a mesh needs to fit and run fast
          for (int mb : micro_batch_options(problem, space, tp, pp, cp))
            for (const std::string& rc : space.recompute)
              for (bool sp : space.sequence_parallel) {
                if (sp && tp == 1) continue;
                k.mb = mb;
                k.recompute = rc;
                k.sp = sp;
                out.push_back(k);
              }
          // with each other ZeRO stage, the rest as they were: a mesh with more replicas often
          // wants its states sharded differently
          k.mb = at.mb, k.recompute = at.recompute, k.sp = at.sp && tp > 1;
          for (int zero : space.zero)
            if (zero != at.zero) {
              k.zero = zero;
              out.push_back(k);
            }
        }
  auto each = [&](const auto& values, auto set) {
    for (const auto& x : values) {
      Knobs k = at;
      set(k, x);
      out.push_back(k);
    }
  };
  std::vector<std::pair<std::string, int>> schedules;
  for (const std::string& name : space.schedules)
    for (int v : name == "interleaved-1f1b" ? space.chunks : std::vector<int>{1}) schedules.push_back({name, v});
  each(schedules, [](Knobs& k, const std::pair<std::string, int>& s) { k.schedule = s.first, k.v = s.second; });
  each(space.zero, [](Knobs& k, int x) { k.zero = x; });
  each(space.cp_comm, [](Knobs& k, const std::string& x) { k.cp_comm = x; });
  each(space.offload, [](Knobs& k, const std::string& x) { k.offload = x; });
  return out;
}

}  // namespace

long polish(const Problem& problem, const Space& space, Tracker& tracker, int max_rounds) {
  long scored = 0;
  if (!tracker.options().polish) return 0;
  for (int round = 0; round < max_rounds && tracker.best() && !tracker.out_of_time(); ++round) {
    const double before = tracker.best()->score.cost();
    const Knobs at = knobs_of(tracker.best()->plan);
    for (const Knobs& k : neighbours(problem, space, at)) {
      Plan plan;
      if (!plan_of(problem, space, k, plan)) continue;
      const Score s = tracker.evaluate(plan);
      ++scored;
      if (s.valid && !s.fits && plan.dp > 1 && plan.zero < 3) {  // repair: the states sharded
        plan.zero = 3;
        tracker.evaluate(plan);
        ++scored;
      }
      if (tracker.out_of_time()) break;
    }
    if (!(tracker.best()->score.cost() < before)) break;
  }
  return scored;
}

}  // namespace dejavu::strategies::search
