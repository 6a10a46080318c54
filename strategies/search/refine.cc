#include "strategies/search/refine.h"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>

#include "strategies/data_parallel.h"
#include "strategies/recompute_modes.h"
#include "strategies/schedules/schedule.h"
#include "strategies/search/space.h"
#include "strategies/search/stage_balance.h"

namespace dejavu::strategies::search {

namespace {

// The first k stages keep the plan's mode, the others a lighter one of the search's modes.
void add_stage_recompute(const Problem& problem, const Plan& at, std::vector<Plan>& out) {
  if (at.pp < 2) return;
  const std::string& strong = at.recompute_of(0);
  for (const std::string& weak : problem.recompute.empty() ? Space{}.recompute : problem.recompute) {
    if (recompute_replayed(weak) >= recompute_replayed(strong)) continue;
    for (int k = 1; k < at.pp; ++k) {
      Plan p = at;
      p.stage_recompute.assign(static_cast<size_t>(at.pp), weak);
      std::fill(p.stage_recompute.begin(), p.stage_recompute.begin() + k, strong);
      p.recompute = strong;
      out.push_back(std::move(p));
    }
  }
}

// A quarter, half and three quarters of n (each at least 1 and below n).
std::set<int> quarters_of(int n) {
  std::set<int> out;
  for (int q = 1; q <= 3; ++q)
    if (n * q / 4 >= 1 && n * q / 4 < n) out.insert(n * q / 4);
  return out;
}

// Under full recomputation, only the first k layers of each model chunk recomputed
// (Megatron-Core's block method), k a quarter, half and three quarters of a chunk's layers:
// less replayed where the memory allows it.
void add_block_recompute(const Problem& problem, const Plan& at, std::vector<Plan>& out) {
  if (at.recompute != "full" || !at.stage_recompute.empty() || at.recompute_layers > 0) return;
  for (int k : quarters_of(problem.model->layers / std::max(1, at.total_stages()))) {
    Plan p = at;
    p.recompute_layers = k;
    out.push_back(std::move(p));
  }
}

// Instead of recomputation without pipeline parallelism, the first quarter, half or three
// quarters of the layers' activations offloaded to CPU memory (Megatron-Core's
// cpu_offloading_num_layers), where every server has a host side: free where the copies hide
// under the layers (a Grace CPU's NVLink-C2C), dear over PCIe.
void add_layer_offload(const Problem& problem, const Plan& at, std::vector<Plan>& out) {
  if (at.pp > 1 || at.recompute == "none" || !at.offload_activations.empty()) return;
  for (const platforms::ServerGroup& g : problem.cluster->groups)
    if (g.host.pcie_Bps <= 0 || g.host.memory_bytes <= 0 || g.host.memory_Bps <= 0) return;
  for (int k : quarters_of(problem.model->layers)) {
    Plan p = at;
    p.recompute = "none";
    p.stage_recompute.clear();
    p.recompute_layers = 0;
    p.recompute_early_stop = false;
    p.offload_activations = "cpu";
    p.offload_activation_layers = k;
    out.push_back(std::move(p));
  }
}

// Each overlap switch flipped alone, all that apply on at once (from ZeRO 0 or 3 also with
// the distributed optimizer, ZeRO 1 and 2, that the gradient and parameter overlaps need), and
// DDP's 25 MB buckets.
void add_overlaps(const Plan& at, std::vector<Plan>& out) {
  std::vector<Plan> flips(4, at);
  flips[0].overlap_grad_reduce = !at.overlap_grad_reduce;
  flips[1].overlap_param_gather = !at.overlap_param_gather;
  flips[2].tp_comm_overlap = !at.tp_comm_overlap;
  Plan& all = flips[3];
  all.overlap_grad_reduce = at.dp > 1 && at.zero < 3;
  all.overlap_param_gather = all.overlap_grad_reduce && at.zero >= 1;
  all.tp_comm_overlap = at.tp > 1 && at.sequence_parallel;
  const Plan all_on = all;                          // (pushing below moves the flips)
  if (at.dp > 1 && (at.zero == 0 || at.zero == 3))  // with Megatron's distributed optimizer, its overlaps
    for (int zero : {1, 2}) {
      flips.push_back(all_on);
      Plan& p = flips.back();
      p.zero = zero;
      p.overlap_grad_reduce = p.overlap_param_gather = true;
      p.offload_parameters.clear();  // ZeRO-Infinity's parameter offload needs ZeRO-3
    }
  if (at.dp > 1 && at.zero < 3 && at.data_parallel.bucket_bytes == 0) {
    flips.push_back(at);
    flips.back().data_parallel.bucket_bytes = 25e6;
  }
  for (Plan& p : flips)
    if (megatron_switch_break(p).key.empty()) out.push_back(std::move(p));
}

// ZeRO's states sharded over groups of replicas rather than all of them (dp_shard: HSDP), the
// gathers and reduce-scatters inside a group, the shard all-reduced across groups: groups of
// one server's replicas, and 4, 16, ... times that, below dp. The engine prices them.
void add_shard_groups(const Problem& problem, const Plan& at, std::vector<Plan>& out) {
  if (at.zero < 1 || at.dp_shard > 0 || at.ep != 1 || at.dp < 4) return;
  int server = problem.cluster->groups.front().gpus_per_server;
  for (const platforms::ServerGroup& g : problem.cluster->groups) server = std::min(server, g.gpus_per_server);
  for (int group = std::max(2, server / std::max(1, at.tp * at.cp)); group < at.dp; group *= 4)
    if (at.dp % group == 0) {
      Plan p = at;
      p.dp_shard = group;
      out.push_back(std::move(p));
    }
}

// Plain data parallelism (no ZeRO, buckets, compression or uneven replicas) synchronised by
// another topology that averages exactly; a parameter server sharded over the servers.
void add_syncs(const Problem& problem, const Plan& at, std::vector<Plan>& out) {
  const auto& d = at.data_parallel;
  if (at.dp < 2 || at.zero > 0 || at.overlap_grad_reduce || d.bucket_bytes > 0 || d.compression != "none" ||
      d.delay > 0 || !at.replica_microbatches.empty())
    return;
  for (const std::string& name : sync_topologies().names()) {
    const auto sync = sync_topologies().make(name);
    if (name == d.sync || !sync->averages_exactly()) continue;
    Plan p = at;
    p.data_parallel.sync = name;
    out.push_back(std::move(p));
    if (sync->takes_servers() && at.dp > 2 && problem.cluster->server_count() > 1) {
      // sharded, one shard per server
      out.push_back(out.back());
      out.back().data_parallel.servers = std::min(at.dp, problem.cluster->server_count());
    }
  }
}

// Flushing schedules the space leaves to the engine (Chimera, TeraPipe), one model chunk;
// token slicing only when `dear` ones are asked for (its dynamic program prices every cut).
void add_schedules(const Plan& at, bool dear, std::vector<Plan>& out) {
  if (at.pp < 2) return;
  const std::vector<std::string> searched = Space().schedules;  // the first tier's, whatever the problem
  for (const std::string& name : schedules().names()) {
    if (name == at.schedule || std::find(searched.begin(), searched.end(), name) != searched.end()) continue;
    const auto schedule = schedules().make(name);
    if (!schedule->flushes() || (schedule->slices_tokens() && !dear)) continue;
    Plan p = at;
    p.schedule = name;
    if (p.virtual_stages > 1) p.stages.clear();  // a split of p stages is kept
    p.virtual_stages = 1;
    out.push_back(std::move(p));
  }
}

// Submesh shapes per stage (stage_tp) one move from the plan's, on the same GPUs (the
// widths' sum kept): two neighbouring stages of different widths swap them; a stage doubles
// and two stages of its width nearest it halve; or the reverse: it halves and two of a
// quarter its width double. Layers are split anew by each stage's speed at its own degree
// (stage_balance). Tensor groups stay inside a server and divide the heads.
class StageShapes {
 public:
  StageShapes(const Problem& problem, const Plan& at) : problem_(problem), at_(at) {
    for (int s = 0; s < at.pp; ++s) shape_.push_back(at.tp_of(s));
    for (const platforms::ServerGroup& g : problem.cluster->groups) widest_ = std::min(widest_, g.gpus_per_server);
  }

  void add(std::vector<Plan>& out) {
    const int p = at_.pp;
    for (int a = 0; a + 1 < p; ++a)
      if (shape_[a] != shape_[a + 1]) emit({{a, shape_[a + 1]}, {a + 1, shape_[a]}}, out);
    for (int a = 0; a < p; ++a)
      for (const auto& [b, c] : {std::pair{a - 1, a + 1}, {a + 1, a + 2}, {a - 2, a - 1}}) {
        if (b < 0 || c >= p) continue;
        const int t = shape_[a];
        if (shape_[b] == t && shape_[c] == t && t % 2 == 0) emit({{a, 2 * t}, {b, t / 2}, {c, t / 2}}, out);
        if (shape_[b] == t / 4 && shape_[c] == t / 4 && t % 4 == 0) emit({{a, t / 2}, {b, t / 2}, {c, t / 2}}, out);
      }
  }

 private:
  void emit(std::initializer_list<std::pair<int, int>> moves, std::vector<Plan>& out) {
    std::vector<int> shape = shape_;
    for (const auto& [s, t] : moves) {
      if (t > widest_ || (problem_.model->heads > 0 && problem_.model->heads % t != 0)) return;
      shape[static_cast<size_t>(s)] = t;
    }
    const int most = *std::max_element(shape.begin(), shape.end());
    if (std::count(shape.begin(), shape.end(), most) == at_.pp) return;  // one width: a plain mesh
    Plan p = at_;
    p.stage_tp = std::move(shape);
    p.tp = most;
    p.stages.clear();
    Plan balanced;
    // Context and expert groups span replicas, beyond what the cache's key sees.
    StageBlockCache* cache = at_.cp == 1 && at_.ep == 1 ? &prices_ : nullptr;
    out.push_back(balance_stages(problem_, p, balanced, cache) ? balanced : p);
  }

  const Problem& problem_;
  const Plan& at_;
  std::vector<int> shape_;
  int widest_ = 1 << 30;
  StageBlockCache prices_;  // the shapes differ only in their stages' degrees
};

void add_stage_shapes(const Problem& problem, const Plan& at, std::vector<Plan>& out) {
  if (at.pp < 3 || at.virtual_stages != 1) return;
  const auto schedule = schedules().make(at.schedule);
  if (schedule->pipelines() > 1 || schedule->slices_tokens()) return;
  StageShapes(problem, at).add(out);
}

// A stage shape whose first or last stage is wider than in `at`: of the shapes the engine
// must price (their replicas' pipeline hops differ), the ones refine scores, once.
bool widens_an_end(const Plan& at, const Plan& p) {
  return p.tp_of(0) > at.tp_of(0) || p.tp_of(p.pp - 1) > at.tp_of(at.pp - 1);
}

}  // namespace

std::vector<Plan> refinements(const Problem& problem, const Plan& at, bool dear) {
  std::vector<Plan> out;
  add_stage_recompute(problem, at, out);
  add_block_recompute(problem, at, out);
  add_layer_offload(problem, at, out);
  add_overlaps(at, out);
  add_shard_groups(problem, at, out);
  add_syncs(problem, at, out);
  add_schedules(at, dear, out);
  add_stage_shapes(problem, at, out);
  return out;
}

long refine(const Problem& problem, Tracker& tracker, int bases, int rounds) {
  // The best plans of distinct meshes: plans that differ only in what the refinement itself
  // moves, or in the microbatch or ZeRO stage, would refine alike.
  std::vector<Candidate> from;
  std::set<std::tuple<int, int, int, int>> meshes;
  for (const Candidate& c : tracker.top()) {
    if (static_cast<int>(from.size()) >= bases) break;
    const Plan& p = c.plan;
    if (meshes.insert({p.tp, p.pp, p.cp, p.ep}).second) from.push_back(c);
  }
  long scored = 0;
  for (const Candidate& base : from) {
    Plan at = base.plan;
    double at_cost = base.score.cost();
    for (int round = 0; round < rounds && !tracker.out_of_time(); ++round) {
      Plan next;
      double next_cost = at_cost;
      const bool dear = &base == &from.front() && round == 0;  // once: the best plan
      for (const Plan& p : refinements(problem, at, dear)) {
        if (tracker.out_of_time()) break;
        const bool reshaped = !p.stage_tp.empty() && p.stage_tp != at.stage_tp;
        if (reshaped && !tracker.prices_fast(p) && !(dear && widens_an_end(at, p))) continue;
        const Score s = tracker.evaluate_as_is(p);
        ++scored;
        if (s.cost() < next_cost) next = p, next_cost = s.cost();
      }
      if (!(next_cost < at_cost)) break;
      at = next;
      at_cost = next_cost;
    }
  }
  return scored;
}

}  // namespace dejavu::strategies::search
