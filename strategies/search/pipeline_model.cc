#include "strategies/search/pipeline_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

#include "platforms/calibration.h"
#include "platforms/perf_model.h"
#include "sim/collective.h"
#include "strategies/lowering/offload.h"
#include "strategies/recompute_modes.h"
#include "strategies/schedules/schedule.h"
#include "strategies/search/group_signature.h"

namespace dejavu::strategies::search {

PipelineModel::PipelineModel(const Problem& problem, std::string collective_algorithm)
    : problem_(problem),
      algorithm_(std::move(collective_algorithm)),
      collective_(sim::collective_algorithms().make(algorithm_)) {}

const std::vector<BlockItems>& PipelineModel::blocks(const Plan& plan, int stage) {
  const std::string& mode = plan.recompute_of(stage);
  const int rc = 2 * recompute_mode_index(mode) + (mode == "full" && plan.recompute_early_stop ? 1 : 0);
  const bool split = schedules().make(plan.schedule)->splits_backward();
  // Stages whose tensor groups have the same GPU types and rings price alike.
  const int t = plan.tp_of(stage);
  auto [kind, fresh] = stage_kind_.try_emplace(std::make_pair(t, gpu_index(plan, stage, 0, 0)), 0);
  if (fresh) {
    const std::string sig = group_signature(*problem_.cluster, plan, stage);
    kind->second = signatures_.try_emplace(sig, static_cast<int>(signatures_.size())).first->second;
  }
  const auto key =
      std::make_tuple(kind->second, t, plan.micro_batch_size, rc, plan.sequence_parallel ? 1 : 0, split ? 1 : 0);
  auto it = blocks_.find(key);
  if (it == blocks_.end())
    it = blocks_.emplace(key, block_items(*problem_.model, *problem_.cluster, plan, stage, algorithm_, split)).first;
  return it->second;
}

// Whether every replica prices like replica 0: the same GPU types, tensor rings and
// pipeline hops (lower()'s replica classes). Depends on the stages' tensor degrees only.
bool PipelineModel::one_class(const Plan& plan) {
  degrees_.resize(static_cast<size_t>(plan.pp));  // the key, in a buffer kept across plans
  for (int s = 0; s < plan.pp; ++s) degrees_[static_cast<size_t>(s)] = plan.tp_of(s);
  if (const auto known = one_class_.find(degrees_); known != one_class_.end()) return known->second;
  const auto it = one_class_.emplace(degrees_, true).first;
  const auto& cluster = *problem_.cluster;
  const auto& net = cluster.network;
  const int p = plan.pp, d = plan.dp;
  auto host = [&](int s, int r, int k) { return cluster.gpus[gpu_index(plan, s, r, k)].host; };
  auto same = [](const sim::PathCost& a, const sim::PathCost& b) {
    return a.latency_s == b.latency_s && a.bottleneck_Bps == b.bottleneck_Bps;
  };
  for (int s = 0; s < p && it->second; ++s)
    for (int r = 1, t = plan.tp_of(s); r < d && it->second; ++r)
      for (int k = 0; k < t; ++k) {
        if (cluster.gpus[gpu_index(plan, s, r, k)].spec != cluster.gpus[gpu_index(plan, s, 0, k)].spec ||
            !same(net.path_cost(host(s, r, k), host(s, r, (k + 1) % t)),
                  net.path_cost(host(s, 0, k), host(s, 0, (k + 1) % t)))) {
          it->second = false;
          break;
        }
      }
  // Every hop between GPU stages (interleaving also goes from the last back to the first).
  for (int s = 0; s < p && p > 1 && it->second; ++s)
    for (int r = 1; r < d && it->second; ++r) {
      const int z = (s + 1) % p;
      if (!same(net.path_cost(host(s, 0, 0), host(z, 0, 0)), net.path_cost(host(s, r, 0), host(z, r, 0))) ||
          !same(net.path_cost(host(z, 0, 0), host(s, 0, 0)), net.path_cost(host(z, r, 0), host(s, r, 0))))
        it->second = false;
    }
  return it->second;
}

double PipelineModel::collective_s(const Plan& plan, int stage, int op, double bytes) {
  // The ring over the replicas' first tensor ranks: its first GPU, their stride and count.
  const int first = gpu_index(plan, stage, 0, 0), stride = plan.tp_of(stage) * plan.cp;
  auto [it, fresh] = collective_s_.try_emplace(std::make_tuple(first, stride, plan.dp, op, bytes), 0.0);
  if (fresh) {
    std::vector<int> ring;
    for (int r = 0; r < plan.dp; ++r) ring.push_back(problem_.cluster->gpus[gpu_index(plan, stage, r, 0)].host);
    const auto o = static_cast<sim::CollectiveOp>(op);
    const auto& net = problem_.cluster->network;
    it->second = sim::algorithm_for(*collective_, net, ring, o).time_s(net, ring, o, bytes);
  }
  return it->second;
}

double PipelineModel::send_s(const Plan& plan, int from, int to, double bytes) {
  // From the sending stage's first GPU to the receiving one's (the first group of lower()'s
  // sends; the search's engine prices a set of sends by its first).
  const int src = gpu_index(plan, from, 0, 0), dst = gpu_index(plan, to, 0, 0);
  auto [it, fresh] = send_s_.try_emplace(std::make_tuple(src, dst, bytes), 0.0);
  if (fresh) {
    const auto& c = *problem_.cluster;
    it->second = sim::transfer_time_s(c.network, c.gpus[src].host, c.gpus[dst].host, bytes);
  }
  return it->second;
}

const std::vector<std::vector<WorkItem>>& PipelineModel::orders(const Plan& plan) {
  const int p = plan.pp, m = plan.microbatches(), v = plan.virtual_stages;
  auto [it, fresh] = orders_.try_emplace(std::make_tuple(plan.schedule, p, m, v));
  if (fresh) {
    const auto schedule = schedules().make(plan.schedule);
    for (int s = 0; s < p; ++s) it->second.push_back(schedule->order(s, p, m, v));
  }
  return it->second;
}

namespace {
enum Kind { kFwd, kBwd, kBwdInput, kBwdWeight };
constexpr double kUnknown = -1;

int kind_of(const WorkItem& w) {
  return !w.backward                      ? kFwd
         : w.part == BackwardPart::Weight ? kBwdWeight
         : w.part == BackwardPart::Input  ? kBwdInput
                                          : kBwd;
}

const ItemCost& cost_of(const BlockItems& blk, int kind) {
  return kind == kFwd ? blk.fwd : kind == kBwd ? blk.bwd : kind == kBwdInput ? blk.bwd_input : blk.bwd_weight;
}

// Blocks to virtual stages: before the layers -> the first, after -> the last.
std::vector<int> block_owners(const std::vector<BlockItems>& all, const std::vector<int>& layers_of, int layers) {
  const int V = static_cast<int>(layers_of.size());
  std::vector<int> owner(all.size());
  int layer = 0, vs = 0, used = 0;
  bool after = false;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!all[i].is_layer) {
      owner[i] = after || layer > 0 ? V - 1 : 0;
      continue;
    }
    while (used == layers_of[vs]) {
      ++vs;
      used = 0;
    }
    owner[i] = vs;
    ++used;
    if (++layer == layers) after = true;
  }
  return owner;
}
}  // namespace

// Each virtual stage's work items, from its blocks in order; each GPU stage's memory.
struct PipelineModel::Work {
  std::vector<std::array<ItemCost, 4>> item;
  std::vector<double> params, chunk_params, capacity, reserved;
  std::vector<const std::vector<BlockItems>*> stage_blocks;
  std::vector<std::vector<int>> owned;  // each virtual stage's blocks, forward order
  std::vector<double> send_fwd, send_bwd;
  // ZeRO-3: per stage, per block, its weights' all-gather and its gradients' reduce-scatter.
  std::vector<std::vector<double>> gather_s, reduce_s;
  double element_bytes = 0, gradient_bytes = 0;  // a weight's and a gradient's (Plan::grad_dtype)
  // recompute_layers: per stage, its blocks with the recomputed ones and the kept ones mixed.
  std::vector<std::vector<BlockItems>> mixed;
};

// Memory events (time, 1 allocates or 0 frees, bytes) of one stage, in four lists each in
// time order (compute, gathers, reductions' buffers, reductions' ends) so that merging
// them replaces a sort; as sim::memory_profiles, frees go before allocations at one time.
using MemoryEvent = std::tuple<double, int, double>;
enum EventList { kComputeEvents, kGatherEvents, kReduceStartEvents, kReduceEndEvents, kEventLists };

// The list scheduler's state: start = max(inputs done, stream free).
struct PipelineModel::Timeline {
  Timeline(int p, int V, int m)
      : f_end(V, std::vector<double>(m, kUnknown)),
        b_end(f_end),
        fs_end(f_end),
        bs_end(f_end),
        compute_free(p, 0),
        pp_free(p, 0),
        dp_free(p, 0),
        last_backward(p, 0),
        held(p, 0),
        held_peak(p, 0),
        events(p),
        block_end(p) {}
  std::vector<std::vector<double>> f_end, b_end, fs_end, bs_end;
  std::vector<double> compute_free, pp_free, dp_free, last_backward;
  std::vector<double> held, held_peak;                                    // activations, without ZeRO-3
  std::vector<std::array<std::vector<MemoryEvent>, kEventLists>> events;  // per stage
  std::vector<std::vector<double>> block_end;                             // ZeRO-3: each gathered block's end, in order
  double makespan = 0;
  bool host_full = false;  // an offloaded optimizer some server cannot hold
};

void PipelineModel::stage_work(const Plan& plan, int s, const std::vector<int>& layers_of, Work& w) {
  const auto& cluster = *problem_.cluster;
  const int p = plan.pp;
  for (int r = 0; r < plan.dp; ++r)
    for (int k = 0; k < plan.tp_of(s); ++k) {
      const double mem = cluster.gpus[gpu_index(plan, s, r, k)].spec->memory_bytes;
      w.capacity[s] = w.capacity[s] == 0 ? mem : std::min(w.capacity[s], mem);
      w.reserved[s] = std::max(w.reserved[s], cluster.gpus[gpu_index(plan, s, r, k)].runtime_bytes());
    }
  // recompute_layers (Megatron-Core's block method, as build_stage_work applies it): the first
  // n layers of each model chunk recomputed in the stage's mode, the rest keeping everything,
  // the blocks around the layers as the mode prices them.
  const int n = plan.recompute_of(s) == "none" ? 0 : plan.recompute_layers;
  if (n > 0) {
    Plan first = plan;  // block_items prices one mode a stage
    first.recompute_layers = 0;
    w.mixed[s] = blocks(first, s);
  }
  const std::vector<BlockItems>& all = n > 0 ? w.mixed[s] : blocks(plan, s);
  const std::vector<int> owner = block_owners(all, layers_of, problem_.model->layers);
  if (n > 0) {
    Plan kept = plan;
    kept.recompute_layers = 0;
    kept.recompute = "none";
    kept.stage_recompute.clear();
    const std::vector<BlockItems>& none = blocks(kept, s);
    std::vector<int> rank(static_cast<size_t>(plan.total_stages()), 0);
    for (size_t i = 0; i < none.size(); ++i)
      if (none[i].is_layer && rank[static_cast<size_t>(owner[i])]++ >= n) w.mixed[s][i] = none[i];
  }
  w.stage_blocks[s] = &all;
  for (int c = 0; c < plan.virtual_stages; ++c) {
    const int vs = c * p + s;
    std::array<ItemCost, 4>& it = w.item[vs];
    for (size_t i = 0; i < all.size(); ++i)
      if (owner[i] == vs) {
        it[kFwd].append(all[i].fwd);
        w.chunk_params[vs] += all[i].params_per_gpu;
        w.owned[vs].push_back(static_cast<int>(i));
      }
    for (size_t i = all.size(); i-- > 0;)
      if (owner[i] == vs) {
        it[kBwd].append(all[i].bwd);
        it[kBwdInput].append(all[i].bwd_input);
        it[kBwdWeight].append(all[i].bwd_weight);
      }
    w.params[s] += w.chunk_params[vs];
  }
  if (plan.zero >= 3 && plan.dp > 1) {
    const double e = w.element_bytes, g = w.gradient_bytes;
    for (const BlockItems& blk : all) {
      w.gather_s[s].push_back(
          collective_s(plan, s, static_cast<int>(sim::CollectiveOp::AllGather), blk.params_per_gpu * e));
      w.reduce_s[s].push_back(
          collective_s(plan, s, static_cast<int>(sim::CollectiveOp::ReduceScatter), blk.params_per_gpu * g));
    }
  }
}

PipelineModel::Work PipelineModel::work(const Plan& plan) {
  const int p = plan.pp, V = plan.total_stages();
  Work w;
  w.element_bytes = plan.weight_element_bytes(problem_.model->dtype);
  w.gradient_bytes = plan.gradient_element_bytes(problem_.model->dtype);
  w.item.resize(V);
  w.params.assign(p, 0.0);
  w.chunk_params.assign(V, 0.0);
  w.capacity.assign(p, 0.0);
  w.reserved.assign(p, 0.0);
  w.stage_blocks.resize(p);
  w.mixed.resize(p);
  w.owned.resize(V);
  w.gather_s.resize(p);
  w.reduce_s.resize(p);
  const std::vector<int> layers_of = plan.layers_per_stage(problem_.model->layers);
  for (int s = 0; s < p; ++s) stage_work(plan, s, layers_of, w);
  const double boundary = problem_.model->boundary_bytes_per_sample * plan.micro_batch_size;
  w.send_fwd.assign(V, 0);
  w.send_bwd.assign(V, 0);
  for (int vs = 0; vs < V; ++vs) {
    if (vs + 1 < V) w.send_fwd[vs] = send_s(plan, vs % p, (vs + 1) % p, boundary / plan.boundary_split((vs + 1) % p));
    if (vs > 0) w.send_bwd[vs] = send_s(plan, vs % p, (vs - 1) % p, boundary / plan.boundary_split((vs - 1) % p));
  }
  return w;
}

// ZeRO-3, as lower() emits it: block by block, each block's weights gathered on the
// data-parallel stream once block n - 1 - prefetch is done (in a backward pass without
// zero_backward_prefetch pre, block n - 1), and released at the block's end; a block's
// reduce-scatter follows the next block's gather on that stream (with none, precedes it).
double PipelineModel::zero3_item(const Plan& plan, const Work& w, Timeline& t, int s, int vs, int kind, double ready) {
  const double e = w.element_bytes, g = w.gradient_bytes;
  const double dpc = plan.dp;
  const std::vector<BlockItems>& all = *w.stage_blocks[s];
  const std::vector<int>& mine = w.owned[vs];
  auto& events = t.events[s];
  const bool backward = kind != kFwd;
  int pending = -1;  // the block whose reduction waits for the next gather
  double pending_end = 0, pending_bytes = 0;
  auto reduce = [&] {
    if (pending < 0) return;
    t.dp_free[s] = std::max(t.dp_free[s], pending_end) + w.reduce_s[s][pending];
    events[kReduceEndEvents].emplace_back(t.dp_free[s], 0, -pending_bytes);
    t.makespan = std::max(t.makespan, t.dp_free[s]);
    pending = -1;
  };
  double end = ready;
  for (size_t i = 0; i < mine.size(); ++i) {
    const int bi = mine[kind == kFwd ? i : mine.size() - 1 - i];
    const BlockItems& blk = all[bi];
    const ItemCost& c = cost_of(blk, kind);
    double start = std::max(t.compute_free[s], ready);
    const double held = blk.params_per_gpu * e * (dpc - 1) / dpc;       // gathered weights
    const double gradients = blk.params_per_gpu * g * (dpc - 1) / dpc;  // full gradients
    const bool gathers = kind != kBwdWeight && blk.params_per_gpu > 0;
    // The gradients' reduce-scatter, after the pass that completes them (lower()'s rule).
    const bool reduces = blk.params_per_gpu > 0 && (kind == kBwd || (kind == kBwdWeight && blk.weight_pass) ||
                                                    (kind == kBwdInput && !blk.weight_pass));
    if (plan.zero_reduces_before_gather(backward)) reduce();
    if (gathers) {
      const size_t n = t.block_end[s].size();
      const size_t ahead = plan.zero_gather_ahead(backward);
      double g0 = t.dp_free[s];
      if (n > ahead) g0 = std::max(g0, t.block_end[s][n - 1 - ahead]);
      t.dp_free[s] = g0 + w.gather_s[s][bi];
      events[kGatherEvents].emplace_back(g0, 1, held);
      start = std::max(start, t.dp_free[s]);
    }
    if (gathers || reduces) reduce();
    end = start + c.duration_s;
    t.compute_free[s] = end;
    if (c.peak != 0) events[kComputeEvents].emplace_back(start, 1, c.peak);
    if (c.peak - c.level != 0) events[kComputeEvents].emplace_back(end, 0, -(c.peak - c.level));
    if (gathers) {
      events[kComputeEvents].emplace_back(end, 0, -held);
      t.block_end[s].push_back(end);
    }
    if (reduces) {
      events[kReduceStartEvents].emplace_back(start, 1, gradients);
      pending = bi;
      pending_end = end;
      pending_bytes = gradients;
    }
  }
  reduce();
  return end;
}

namespace {
// The highest level memory reaches from `level`, walking the lists merged in time order
// (frees first at one time). Each list is in time order already, bar ties a zero-length
// item can make, which a check finds and a sort fixes; events tied in time and kind all
// free or all allocate, so their order leaves the peak as it is.
double peak_of(std::array<std::vector<MemoryEvent>, kEventLists>& lists, double level) {
  auto earlier = [](const MemoryEvent& a, const MemoryEvent& b) {
    return std::get<0>(a) < std::get<0>(b) || (std::get<0>(a) == std::get<0>(b) && std::get<1>(a) < std::get<1>(b));
  };
  for (auto& list : lists)
    if (!std::is_sorted(list.begin(), list.end(), earlier)) std::stable_sort(list.begin(), list.end(), earlier);
  std::array<size_t, kEventLists> at{};
  double peak = level;
  for (;;) {
    int next = -1;
    for (int k = 0; k < kEventLists; ++k)
      if (at[k] < lists[k].size() && (next < 0 || earlier(lists[k][at[k]], lists[next][at[next]]))) next = k;
    if (next < 0) return peak;
    level += std::get<2>(lists[next][at[next]++]);
    peak = std::max(peak, level);
  }
}
}  // namespace

// When the item's first task may start besides its stream, or kUnknown while an input is not done.
double PipelineModel::ready_s(const WorkItem& w, int vs, int V, const Timeline& t) {
  const int j = w.microbatch;
  if (!w.backward) return vs > 0 ? t.fs_end[vs - 1][j] : 0;
  if (w.part == BackwardPart::Weight) return t.b_end[vs][j];
  if (t.f_end[vs][j] == kUnknown) return kUnknown;
  double ready = t.f_end[vs][j];
  if (vs + 1 < V) {
    if (t.bs_end[vs + 1][j] == kUnknown) return kUnknown;
    ready = std::max(ready, t.bs_end[vs + 1][j]);
  }
  return ready;
}

// Runs one work item at `ready` on stage s and sends its boundary on.
void PipelineModel::run_item(const Plan& plan, const Work& w, Timeline& t, const WorkItem& item, int s, double ready) {
  const int p = plan.pp, V = plan.total_stages(), j = item.microbatch, vs = item.chunk * p + s;
  const int kind = kind_of(item);
  double end = 0;
  if (plan.zero >= 3 && plan.dp > 1) {
    end = zero3_item(plan, w, t, s, vs, kind, ready);
  } else {
    const ItemCost& c = w.item[vs][kind];
    const double start = std::max(t.compute_free[s], ready);
    end = start + c.duration_s;
    t.compute_free[s] = end;
    // Items on one compute stream do not overlap: their events come in time order.
    t.held[s] += c.peak;
    t.held_peak[s] = std::max(t.held_peak[s], t.held[s]);
    t.held[s] -= c.peak - c.level;
  }
  t.makespan = std::max(t.makespan, end);
  auto send = [&](std::vector<std::vector<double>>& sent, double cost) {
    const double ss = std::max(t.pp_free[s], end);
    sent[vs][j] = t.pp_free[s] = ss + cost;
    t.makespan = std::max(t.makespan, t.pp_free[s]);
  };
  if (!item.backward) {
    t.f_end[vs][j] = end;
    if (vs + 1 < V) send(t.fs_end, w.send_fwd[vs]);
  } else {
    t.last_backward[s] = std::max(t.last_backward[s], end);
    if (item.part != BackwardPart::Weight) {
      t.b_end[vs][j] = end;
      if (vs > 0) send(t.bs_end, w.send_bwd[vs]);
    }
  }
}

// Walks every stage's order until it blocks on an input; false for an order it cannot finish.
bool PipelineModel::walk(const Plan& plan, const Work& w, Timeline& t) {
  const int p = plan.pp, V = plan.total_stages();
  const std::vector<std::vector<WorkItem>>& order = orders(plan);
  std::vector<size_t> next(p, 0);
  size_t remaining = 0;
  for (int s = 0; s < p; ++s) remaining += order[s].size();
  while (remaining > 0) {
    bool moved = false;
    for (int s = 0; s < p; ++s)
      for (; next[s] < order[s].size(); ++next[s], --remaining, moved = true) {
        const WorkItem& item = order[s][next[s]];
        const double ready = ready_s(item, item.chunk * p + s, V, t);
        if (ready == kUnknown) break;
        run_item(plan, w, t, item, s, ready);
      }
    if (!moved) return false;  // a schedule this walk cannot order: leave it to the engine
  }
  return true;
}

// Gradient sync and the optimizer step of stage s; returns its resident model states.
double PipelineModel::finish_stage(const Plan& plan, const Work& w, Timeline& t, int s) {
  const auto& model = *problem_.model;
  const auto& cluster = *problem_.cluster;
  const int d = plan.dp;
  const double dpc = d, e = w.element_bytes, g = w.gradient_bytes;
  auto collective = [&](sim::CollectiveOp op, double bytes) {
    return collective_s(plan, s, static_cast<int>(op), bytes);
  };
  const ModelStateBytes state = model_state_per_param(model.dtype, plan, dpc);
  const bool offloaded = !plan.offload_optimizer.empty();  // the optimizer on the host (lowering/offload.h)
  const double resident = w.params[s] * (state.total() - (offloaded ? state.optimizer : 0)) + w.reserved[s];
  const double grad_bytes = w.params[s] * g;
  double synced = t.last_backward[s];
  if (plan.zero >= 3 && d > 1) {
    synced = std::max(synced, t.dp_free[s]);  // reduce-scattered block by block
  } else if (d > 1) {
    const sim::CollectiveOp op = plan.zero >= 1 ? sim::CollectiveOp::ReduceScatter : sim::CollectiveOp::AllReduce;
    const double start = std::max(t.dp_free[s], t.last_backward[s]);
    synced = t.dp_free[s] = start + collective(op, grad_bytes);
  }
  const double shard = plan.zero >= 1 ? dpc : 1;
  const platforms::PerfModel perf = platforms::perf_model(cluster, *cluster.gpus[gpu_index(plan, s, 0, 0)].spec);
  const sim::Kernel k{sim::OpClass::Optimizer, 0, w.params[s] * optimizer_bytes_per_param(model.dtype, plan) / shard,
                      model.dtype};
  double step_s = perf.time_s(k);
  if (offloaded) {
    const platforms::ServerGroup& server = cluster.group_of(gpu_index(plan, s, 0, 0));
    const OffloadCost cost = offload_cost(plan.offload_optimizer, server, w.params[s] / shard, e, g);
    const platforms::GpuSlot& gpu = cluster.gpus[gpu_index(plan, s, 0, 0)];
    // Gradients down, weights up: transfers as lower() emits them.
    step_s = sim::transfer_time_s(cluster.network, gpu.host, gpu.cpu, w.params[s] / shard * g) + cost.host_seconds +
             sim::transfer_time_s(cluster.network, gpu.cpu, gpu.host, w.params[s] / shard * e);
    if (!fits_host(cost, server)) t.host_full = true;
  }
  const double step_end = std::max(t.compute_free[s], synced) + step_s;
  t.makespan = std::max(t.makespan, step_end);
  if (d > 1 && (plan.zero == 1 || plan.zero == 2))
    t.makespan = std::max(t.makespan,
                          std::max(t.dp_free[s], step_end) + collective(sim::CollectiveOp::AllGather, w.params[s] * e));
  return resident;
}

// What score() leaves to the engine whatever the cluster: knobs it does not walk.
bool PipelineModel::walks(const Plan& plan) {
  if (plan.ep != 1 || plan.cp != 1 || plan.data_parallel.sync != "all-reduce" ||
      plan.data_parallel.compression != "none" || plan.gradient_bucket_bytes(1) > 0 || plan.overlap_param_gather ||
      plan.tp_comm_overlap || plan.defer_embedding_wgrad_compute || !plan.offload_parameters.empty() ||
      !plan.zero_reshard_after_forward || !plan.offload_activations.empty() || !plan.replica_microbatches.empty() ||
      plan.dp_shard > 0)
    return false;
  if (const auto schedule = schedules().make(plan.schedule);
      schedule->pipelines() > 1 || !schedule->flushes() || schedule->slices_tokens())
    return false;  // bidirectional, asynchronous or token-sliced: lower() and the engine handle those
  return true;
}

bool PipelineModel::takes(const Plan& plan) {
  if (!walks(plan)) return false;
  try {
    validate(plan, *problem_.model, *problem_.cluster);
  } catch (const Error&) {
    return true;  // score() refuses it at once
  }
  return one_class(plan);
}

bool PipelineModel::score(const Plan& plan, Score& out) {
  const auto& model = *problem_.model;
  if (!walks(plan)) return false;
  validate(plan, model, *problem_.cluster);  // throws for a plan that breaks a rule
  if (!one_class(plan)) return false;
  const int p = plan.pp;
  const Work w = work(plan);
  Timeline t(p, plan.total_stages(), plan.microbatches());
  if (!walk(plan, w, t)) return false;
  std::vector<double> resident(p);
  for (int s = 0; s < p; ++s) resident[s] = finish_stage(plan, w, t, s);

  out = Score{};
  out.valid = true;
  out.simulated = true;
  out.fits = true;
  out.iteration_time_s = t.makespan;
  double worst = -1;
  for (int s = 0; s < p; ++s) {
    const double peak = std::max(resident[s] + t.held_peak[s], peak_of(t.events[s], resident[s]));
    if (peak > w.capacity[s]) out.fits = false;
    if (peak / w.capacity[s] > worst) {
      worst = peak / w.capacity[s];
      out.peak_memory_bytes = peak;
      out.capacity_bytes = w.capacity[s];
    }
  }
  if (t.host_full) out.fits = false;  // an offloaded optimizer its servers cannot hold
  out.tokens_per_s = plan.global_batch_size * model.tokens_per_sample / t.makespan;
  return true;
}

}  // namespace dejavu::strategies::search
