#include "strategies/search/pipeline_model.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "platforms/calibration.h"
#include "platforms/perf_model.h"
#include "sim/collective.h"
#include "strategies/schedules/schedule.h"

namespace dejavu::strategies::search {

namespace {
}

PipelineModel::PipelineModel(const Problem& problem, std::string collective_algorithm)
    : problem_(problem),
      algorithm_(std::move(collective_algorithm)),
      collective_(sim::collective_algorithms().make(algorithm_)) {}

const std::vector<BlockItems>& PipelineModel::blocks(const Plan& plan, int stage) {
  const int rc = plan.recompute == "full" ? 2 : plan.recompute == "selective" ? 1 : 0;
  const bool split = schedules().make(plan.schedule)->splits_backward();
  // Stages whose tensor groups have the same GPU types and rings price alike.
  auto [kind, fresh] = stage_kind_.try_emplace(std::make_tuple(plan.tp, plan.pp, stage), 0);
  if (fresh) {
    const auto& cluster = *problem_.cluster;
    std::string sig = std::to_string(plan.tp) + ":";
    for (int k = 0; k < plan.tp; ++k) {
      const auto& slot = cluster.gpus[gpu_index(plan, stage, 0, k)];
      const auto c = cluster.network.path_cost(slot.host, cluster.gpus[gpu_index(plan, stage, 0, (k + 1) % plan.tp)].host);
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s,%a/%a;", slot.spec->name.c_str(), c.latency_s, c.bottleneck_Bps);
      sig += buf;
    }
    kind->second = signatures_.try_emplace(sig, static_cast<int>(signatures_.size())).first->second;
  }
  const auto key = std::make_tuple(kind->second, plan.tp, plan.micro_batch_size, rc, plan.sequence_parallel ? 1 : 0,
                                   split ? 1 : 0);
  auto it = blocks_.find(key);
  if (it == blocks_.end())
    it = blocks_.emplace(key, block_items(*problem_.model, *problem_.cluster, plan, stage, algorithm_, split)).first;
  return it->second;
}

// Whether every replica prices like replica 0: the same GPU types, tensor rings and
// pipeline hops (lower()'s replica classes). Depends on (tp, pp) only.
bool PipelineModel::one_class(const Plan& plan) {
  auto [it, fresh] = one_class_.try_emplace({plan.tp, plan.pp}, true);
  if (!fresh) return it->second;
  const auto& cluster = *problem_.cluster;
  const auto& net = cluster.network;
  const int p = plan.pp, d = plan.dp, t = plan.tp;
  auto host = [&](int s, int r, int k) { return cluster.gpus[gpu_index(plan, s, r, k)].host; };
  auto same = [](const sim::PathCost& a, const sim::PathCost& b) {
    return a.latency_s == b.latency_s && a.bottleneck_Bps == b.bottleneck_Bps;
  };
  for (int s = 0; s < p && it->second; ++s)
    for (int r = 1; r < d && it->second; ++r)
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
  auto [it, fresh] = collective_s_.try_emplace(std::make_tuple(plan.tp, plan.pp, stage, op, bytes), 0.0);
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
  auto [it, fresh] = send_s_.try_emplace(std::make_tuple(plan.tp, plan.pp, from, to, bytes), 0.0);
  if (fresh) {
    const auto& c = *problem_.cluster;
    it->second = sim::transfer_time_s(c.network, c.gpus[gpu_index(plan, from, 0, 0)].host,
                                      c.gpus[gpu_index(plan, to, 0, 0)].host, bytes);
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

bool PipelineModel::score(const Plan& plan, Score& out) {
  const auto& model = *problem_.model;
  const auto& cluster = *problem_.cluster;
  if (plan.ep != 1 || plan.cp != 1 || plan.data_parallel.sync != "all-reduce" ||
      plan.data_parallel.compression != "none" || plan.data_parallel.bucket_bytes > 0)
    return false;
  if (const auto schedule = schedules().make(plan.schedule); schedule->pipelines() > 1 || !schedule->flushes())
    return false;  // bidirectional or asynchronous: lower() and the engine handle those
  validate(plan, model, cluster);
  const int p = plan.pp, d = plan.dp, t = plan.tp, m = plan.microbatches(), v = plan.virtual_stages;
  const int V = plan.total_stages();
  if (!one_class(plan)) return false;

  // Virtual stage of every layer: plan.stages, or as even as possible, first stages first.
  std::vector<int> layers_of(V);
  if (!plan.stages.empty()) {
    layers_of = plan.stages;
  } else {
    for (int vs = 0; vs < V; ++vs) layers_of[vs] = model.layers / V + (vs < model.layers % V ? 1 : 0);
  }
  // Each virtual stage's work items, from its blocks in order.
  enum Kind { kFwd, kBwd, kBwdInput, kBwdWeight };
  std::vector<std::array<ItemCost, 4>> item(V);
  std::vector<double> params(p, 0.0), chunk_params(V, 0.0), capacity(p, 0.0), reserved(p, 0.0);
  std::vector<const std::vector<BlockItems>*> stage_blocks(p);
  std::vector<std::vector<int>> owned(V);  // each virtual stage's blocks, forward order
  for (int s = 0; s < p; ++s) {
    for (int r = 0; r < d; ++r)
      for (int k = 0; k < t; ++k) {
        const double mem = cluster.gpus[gpu_index(plan, s, r, k)].spec->memory_bytes;
        capacity[s] = capacity[s] == 0 ? mem : std::min(capacity[s], mem);
        reserved[s] = std::max(reserved[s], cluster.gpus[gpu_index(plan, s, r, k)].reserved_bytes);
      }
    const std::vector<BlockItems>& all = blocks(plan, s);
    // Blocks to virtual stages: before the layers -> the first, after -> the last.
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
      if (++layer == model.layers) after = true;
    }
    stage_blocks[s] = &all;
    for (int c = 0; c < v; ++c) {
      const int vs2 = c * p + s;
      std::array<ItemCost, 4>& it = item[vs2];
      for (size_t i = 0; i < all.size(); ++i)
        if (owner[i] == vs2) {
          it[kFwd].append(all[i].fwd);
          chunk_params[vs2] += all[i].params_per_gpu;
          owned[vs2].push_back(static_cast<int>(i));
        }
      for (size_t i = all.size(); i-- > 0;)
        if (owner[i] == vs2) {
          it[kBwd].append(all[i].bwd);
          it[kBwdInput].append(all[i].bwd_input);
          it[kBwdWeight].append(all[i].bwd_weight);
        }
      params[s] += chunk_params[vs2];
    }
  }

  const double e = sim::dtype_bytes(model.dtype);
  const double dpc = d;
  const double boundary = model.boundary_bytes_per_sample * plan.micro_batch_size;
  auto collective = [&](int s, sim::CollectiveOp op, double bytes) {
    return collective_s(plan, s, static_cast<int>(op), bytes);
  };
  std::vector<double> send_fwd(V, 0), send_bwd(V, 0);
  for (int vs = 0; vs < V; ++vs) {
    if (vs + 1 < V) send_fwd[vs] = send_s(plan, vs % p, (vs + 1) % p, boundary);
    if (vs > 0) send_bwd[vs] = send_s(plan, vs % p, (vs - 1) % p, boundary);
  }
  const bool zero3 = plan.zero >= 3 && d > 1;

  // The list scheduler's times: start = max(inputs done, stream free).
  const std::vector<std::vector<WorkItem>>& order = orders(plan);
  const double unknown = -1;
  std::vector<std::vector<double>> f_end(V, std::vector<double>(m, unknown)), b_end = f_end, fs_end = f_end, bs_end = f_end;
  std::vector<double> compute_free(p, 0), pp_free(p, 0), dp_free(p, 0), last_backward(p, 0);
  std::vector<std::vector<std::tuple<double, int, double>>> events(p);  // as sim::memory_profiles
  std::vector<size_t> next(p, 0);
  std::vector<double> gather_free(p, 0);           // ZeRO-3's gather stream
  std::vector<std::vector<double>> block_end(p);  // ZeRO-3: each gathered block's end, in order
  std::vector<double> held(p, 0), held_peak(p, 0);  // activations, without ZeRO-3
  // ZeRO-3, as lower() emits it: block by block, each block's weights gathered on the
  // gather stream once block n - 1 - prefetch is done, and released at the block's end.
  double makespan = 0;
  auto zero3_item = [&](int s, int vs, int kind, double ready) {
    const std::vector<BlockItems>& all = *stage_blocks[s];
    const std::vector<int>& mine = owned[vs];
    double end = ready;
    for (size_t i = 0; i < mine.size(); ++i) {
      const BlockItems& blk = all[mine[kind == kFwd ? i : mine.size() - 1 - i]];
      const ItemCost& c = kind == kFwd ? blk.fwd : kind == kBwd ? blk.bwd : kind == kBwdInput ? blk.bwd_input : blk.bwd_weight;
      double start = std::max(compute_free[s], ready), gathered = 0;
      const bool gathers = kind != kBwdWeight && blk.params_per_gpu > 0;
      if (gathers) {
        const size_t n = block_end[s].size();
        double g0 = gather_free[s];
        if (n > static_cast<size_t>(plan.zero_prefetch)) g0 = std::max(g0, block_end[s][n - 1 - plan.zero_prefetch]);
        gather_free[s] = g0 + collective(s, sim::CollectiveOp::AllGather, blk.params_per_gpu * e);
        gathered = blk.params_per_gpu * e * (dpc - 1) / dpc;
        events[s].emplace_back(g0, 1, gathered);
        start = std::max(start, gather_free[s]);
      }
      end = start + c.duration_s;
      compute_free[s] = end;
      if (c.peak != 0) events[s].emplace_back(start, 1, c.peak);
      if (c.peak - c.level != 0) events[s].emplace_back(end, 0, -(c.peak - c.level));
      if (gathers) {
        events[s].emplace_back(end, 0, -gathered);
        block_end[s].push_back(end);
      }
      // The gradients' reduce-scatter, after the pass that completes them (lower()'s rule).
      const bool reduces = kind == kBwd || (kind == kBwdWeight && blk.weight_pass) || (kind == kBwdInput && !blk.weight_pass);
      if (reduces && blk.params_per_gpu > 0) {
        const double full = blk.params_per_gpu * e * (dpc - 1) / dpc;
        events[s].emplace_back(start, 1, full);
        dp_free[s] = std::max(dp_free[s], end) + collective(s, sim::CollectiveOp::ReduceScatter, blk.params_per_gpu * e);
        events[s].emplace_back(dp_free[s], 0, -full);
        makespan = std::max(makespan, dp_free[s]);
      }
    }
    return end;
  };
  size_t remaining = 0;
  for (int s = 0; s < p; ++s) remaining += order[s].size();
  while (remaining > 0) {
    bool moved = false;
    for (int s = 0; s < p; ++s) {
      for (; next[s] < order[s].size(); ++next[s]) {
        const WorkItem& w = order[s][next[s]];
        const int j = w.microbatch, vs = w.chunk * p + s;
        // What the item's first task waits for, besides its stream.
        double ready = 0;
        if (!w.backward) {
          if (vs > 0) {
            if (fs_end[vs - 1][j] == unknown) break;
            ready = fs_end[vs - 1][j];
          }
        } else if (w.part == BackwardPart::Weight) {
          ready = b_end[vs][j];
        } else {
          if (f_end[vs][j] == unknown) break;
          ready = f_end[vs][j];
          if (vs + 1 < V) {
            if (bs_end[vs + 1][j] == unknown) break;
            ready = std::max(ready, bs_end[vs + 1][j]);
          }
        }
        const int kind = !w.backward ? kFwd
                         : w.part == BackwardPart::Weight ? kBwdWeight
                         : w.part == BackwardPart::Input  ? kBwdInput
                                                          : kBwd;
        double end = 0;
        if (zero3) {
          end = zero3_item(s, vs, kind, ready);
        } else {
          const ItemCost& c = item[vs][kind];
          const double start = std::max(compute_free[s], ready);
          end = start + c.duration_s;
          compute_free[s] = end;
          // Items on one compute stream do not overlap: their events come in time order.
          held[s] += c.peak;
          held_peak[s] = std::max(held_peak[s], held[s]);
          held[s] -= c.peak - c.level;
        }
        makespan = std::max(makespan, end);
        if (!w.backward) {
          f_end[vs][j] = end;
          if (vs + 1 < V) {
            const double ss = std::max(pp_free[s], end);
            fs_end[vs][j] = pp_free[s] = ss + send_fwd[vs];
            makespan = std::max(makespan, pp_free[s]);
          }
        } else {
          last_backward[s] = std::max(last_backward[s], end);
          if (w.part != BackwardPart::Weight) {
            b_end[vs][j] = end;
            if (vs > 0) {
              const double ss = std::max(pp_free[s], end);
              bs_end[vs][j] = pp_free[s] = ss + send_bwd[vs];
              makespan = std::max(makespan, pp_free[s]);
            }
          }
        }
        --remaining;
        moved = true;
      }
    }
    if (!moved) return false;  // a schedule this walk cannot order: leave it to the engine
  }

  // Gradient sync and the optimizer step, stage by stage.
  std::vector<double> resident(p);
  const ModelStateBytes state = model_state_per_param(model.dtype, plan.zero, dpc);
  for (int s = 0; s < p; ++s) {
    resident[s] = params[s] * state.total() + reserved[s];
    const double grad_bytes = params[s] * e;
    double synced = last_backward[s];
    if (zero3) {
      synced = std::max(synced, dp_free[s]);  // reduce-scattered block by block
    } else if (d > 1) {
      const sim::CollectiveOp op = plan.zero >= 1 ? sim::CollectiveOp::ReduceScatter : sim::CollectiveOp::AllReduce;
      const double start = std::max(dp_free[s], last_backward[s]);
      synced = dp_free[s] = start + collective(s, op, grad_bytes);
    }
    const double shard = plan.zero >= 1 ? dpc : 1;
    const platforms::PerfModel perf = platforms::perf_model(cluster, *cluster.gpus[gpu_index(plan, s, 0, 0)].spec);
    const sim::Kernel k{sim::OpClass::Optimizer, 0, params[s] * kOptimizerBytesPerParam / shard, model.dtype};
    const double step_end = std::max(compute_free[s], synced) + perf.time_s(k);
    makespan = std::max(makespan, step_end);
    if (d > 1 && (plan.zero == 1 || plan.zero == 2))
      makespan = std::max(makespan, std::max(dp_free[s], step_end) + collective(s, sim::CollectiveOp::AllGather, grad_bytes));
  }

  out = Score{};
  out.valid = true;
  out.simulated = true;
  out.fits = true;
  out.iteration_time_s = makespan;
  double worst = -1;
  for (int s = 0; s < p; ++s) {
    double now = resident[s], peak = now + held_peak[s];
    std::sort(events[s].begin(), events[s].end());
    for (const auto& ev : events[s]) {
      now += std::get<2>(ev);
      peak = std::max(peak, now);
    }
    if (peak > capacity[s]) out.fits = false;
    if (peak / capacity[s] > worst) {
      worst = peak / capacity[s];
      out.peak_memory_bytes = peak;
      out.capacity_bytes = capacity[s];
    }
  }
  out.tokens_per_s = plan.global_batch_size * model.tokens_per_sample / makespan;
  return true;
}

}  // namespace dejavu::strategies::search
