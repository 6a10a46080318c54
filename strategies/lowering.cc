#include "strategies/lowering.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <map>
#include <tuple>

#include "platforms/calibration.h"
#include "platforms/perf_model.h"
#include "sim/collective.h"
#include "sim/limits.h"
#include "strategies/data_parallel.h"
#include "strategies/schedules/schedule.h"
#include "strategies/stage_work.h"

namespace dejavu::strategies {

namespace {

using workloads::ModelGraph;
using workloads::Op;

sim::Kernel kernel_of(const Op& op, const ModelGraph& m, const Plan& plan, Pass pass) {
  const bool in_layer = op.layer >= 0 && op.layer < m.layers;
  const bool split = op.tp == workloads::TpMode::Split || (plan.sequence_parallel && in_layer);
  // Each context rank works on its 1/cp of every sequence; weights are read whole.
  const double t = split ? plan.tp : 1, b = plan.micro_batch_size / static_cast<double>(plan.cp);
  sim::Kernel k;
  k.op_class = op.op_class;
  k.dtype = m.dtype;
  const double weights = op.weight_bytes / (op.expert ? plan.ep : 1);  // a GPU's share of the experts
  if (pass == Pass::Forward || pass == Pass::Replay) {
    k.flops = op.fwd_flops * b / t;
    k.bytes = (op.fwd_bytes * b + weights) / t;
    return k;
  }
  // A whole backward reads the weights for the input gradient and writes the weight
  // gradient; split, each half of a GEMM's backward does one of the two.
  const bool half = pass != Pass::Backward && has_weight_gradient(op);
  k.flops = op.bwd_flops * b / t / (half ? 2 : 1);
  k.bytes = (op.bwd_bytes * b / (half ? 2 : 1) + weights * (half ? 1 : 2)) / t;
  return k;
}

std::string exact(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

// Per (virtual stage, replica class): every segment's duration, block by block.
struct Durations {
  std::vector<std::vector<double>> fwd, bwd, recompute, bwd_input, bwd_weight;
};

using FusedItem = ItemCost;

// Closed-form times of a tensor-parallel group's synchronisations, cached per size.
class TpSyncPricer {
 public:
  TpSyncPricer(const sim::Network& net, const sim::CollectiveAlgorithm& algorithm, std::vector<int> ring, const Plan& plan)
      : net_(net), algorithm_(algorithm), ring_(std::move(ring)), ops_(tp_sync_ops(plan)) {}
  // All of one segment's synchronisation of `bytes` per GPU.
  double time_s(double bytes) {
    auto [it, fresh] = cache_.try_emplace(bytes, 0.0);
    if (fresh)
      for (sim::CollectiveOp op : ops_)
        it->second += sim::algorithm_for(algorithm_, net_, ring_, op).time_s(net_, ring_, op, bytes);
    return it->second;
  }

 private:
  const sim::Network& net_;
  const sim::CollectiveAlgorithm& algorithm_;
  std::vector<int> ring_;
  std::vector<sim::CollectiveOp> ops_;
  std::map<double, double> cache_;
};

// Whether a backward pass over `blk` leaves its weight gradients complete: the whole
// backward does; split, the weight part does, or the input part where the block has no
// weight-gradient work (an embedding's gradient is a scatter of the input gradients).
enum BackwardKind { kWhole, kInput, kWeight };
bool completes_gradients(const Block& blk, int kind) {
  if (kind == kWhole) return true;
  return (kind == kWeight) == !blk.bwd_weight.empty();
}

// ZeRO-3's exchanges on one GPU stage, as FSDP and DeepSpeed run them: per block and
// pass, an all-gather of its weights before it (and after every microbatch's backward of
// the block, a reduce-scatter of its gradients); dense weights over every replica, the
// experts' over the replicas holding the same experts. One collective per block and pass
// stands for every replica class, in the order the stage runs its blocks.
struct Zero3Exchanges {
  struct Exchange {
    std::vector<sim::TaskId> ids;
    double bytes = 0;  // what each GPU holds beyond its shard while the block needs it
  };
  std::vector<Exchange> gathers, reductions;
  int participants = -1, gather_stream = -1, reduce_stream = -1, gather_label = -1, reduce_label = -1;
  int dense_set = -1, expert_set = -1, dense_shards = 1, expert_shards = 1;
  bool experts_apart = false;  // ep > 1: experts are exchanged over their own replicas
  double element_bytes = 2;

  void add(sim::TaskGraph& g, const Block& blk, bool gather, int microbatch) {
    const double experts = experts_apart ? blk.expert_params_per_gpu * element_bytes : 0;
    const double dense = blk.params_per_gpu * element_bytes - experts;
    Exchange out;
    for (const auto& [bytes, shards, set] : {std::tuple{dense, dense_shards, dense_set}, std::tuple{experts, expert_shards, expert_set}}) {
      if (bytes <= 0 || shards <= 1) continue;
      const auto op = gather ? sim::CollectiveOp::AllGather : sim::CollectiveOp::ReduceScatter;
      const sim::TaskId id = g.add_collective(participants, gather ? gather_stream : reduce_stream, op, set, bytes,
                                              gather ? gather_label : reduce_label, microbatch);
      const double more = bytes * (shards - 1) / shards;
      // Gathered weights are held from the gather; the full gradients go with their reduction.
      g.add_memory(id, gather ? more : 0, gather ? 0 : more);
      out.ids.push_back(id);
      out.bytes += more;
    }
    (gather ? gathers : reductions).push_back(std::move(out));
  }
};

// Refuses, before building anything, a plan whose task graph would not fit a laptop's
// memory (limits::kMaxTasks): an upper bound on the tasks per replica class, each work
// item's segments with their collectives, times the microbatches.
void check_task_count(const std::vector<StageWork>& work, const Plan& plan, int classes, bool fused) {
  const double per_segment = 1 + 2 + (plan.ep > 1 ? 2 : 0) + (plan.cp > 1 ? 2 * plan.cp : 0);
  double per_microbatch = 0;
  for (const StageWork& w : work)
    for (const Block& b : w.blocks) {
      const double segments = b.fwd.size() + b.bwd.size() + b.recompute.size() + b.bwd_input.size() + b.bwd_weight.size();
      per_microbatch += fused ? (plan.zero >= 3 ? 4 : 0) : segments * per_segment + (plan.zero >= 3 ? 4 : 0);
    }
  if (fused) per_microbatch += 3.0 * work.size();
  const double tasks = per_microbatch * plan.microbatches() * classes;
  if (tasks > limits::kMaxTasks) {
    auto it = plan.where.find("global_batch_size");
    char buf[200];
    std::snprintf(buf, sizeof buf, "the plan lowers to about %.3g tasks; dejavu simulates at most %.3g (fewer "
                  "microbatches per replica, fewer layers per stage, or a larger micro_batch_size)", tasks, limits::kMaxTasks);
    throw ConfigError(it != plan.where.end() ? it->second : SourceLoc{plan.file, 0, 0}, "global_batch_size", buf);
  }
}

}  // namespace

LoweredJob lower(const ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                 const LowerOptions& options) {
  validate(plan, model, cluster);
  const int p = plan.pp, d = plan.dp, t = plan.tp, m = plan.microbatches(), v = plan.virtual_stages;
  const int cp = plan.cp, K = t * cp;  // GPUs per replica and stage: inner rank c·t + k
  const double b = plan.micro_batch_size, e = sim::dtype_bytes(model.dtype);
  const auto schedule = schedules().make(plan.schedule);
  // A bidirectional schedule runs `pipes` copies of the model's virtual stages; pipeline c
  // is virtual stages c·Vp .. c·Vp + Vp - 1, each a copy of the same work.
  const int pipes = schedule->pipelines(), Vp = plan.total_stages(), V = Vp * pipes;
  std::vector<StageWork> work = build_stage_work(model, plan, schedule->splits_backward());
  for (int c = 1; c < pipes; ++c)
    for (int vs = 0; vs < Vp; ++vs) work.push_back(work[vs]);
  auto gpu = [&](int s, int r, int k) { return gpu_index(plan, s, r, k); };
  auto host = [&](int s, int r, int k) { return cluster.gpus[gpu(s, r, k)].host; };
  auto gpu_stage = [&](int vs) { return schedule->gpu_of(vs, p); };
  auto has_next = [&](int vs) { return (vs + 1) % Vp != 0; };  // within its pipeline
  auto has_prev = [&](int vs) { return vs % Vp != 0; };
  // The gradient rings of GPU stage s: one per tensor-parallel rank over every replica and
  // context rank (they hold the same weights), in GPU order.
  auto dp_rings = [&](int s) {
    sim::CommSet set;
    for (int k = 0; k < t; ++k) {
      std::vector<int> ring;
      for (int r = 0; r < d; ++r)
        for (int c = 0; c < cp; ++c) ring.push_back(host(s, r, c * t + k));
      set.groups.push_back(ring);
    }
    return set;
  };
  const int dpc = d * cp;  // how many GPUs share each gradient
  // With expert parallelism, the rings of the replicas holding the same experts (every
  // ep-th one), per tensor rank.
  auto expert_rings = [&](int s) {
    sim::CommSet set;
    for (int i = 0; i < plan.ep; ++i)
      for (int k = 0; k < t; ++k) {
        std::vector<int> ring;
        for (int r = i; r < d; r += plan.ep)
          for (int x = 0; x < cp; ++x) ring.push_back(host(s, r, x * t + k));
        set.groups.push_back(ring);
      }
    return set;
  };
  const bool fused = options.fuse_items && plan.ep == 1 && cp == 1 && plan.data_parallel.bucket_bytes <= 0;
  const auto tp_algorithm = sim::collective_algorithms().make(options.collective_algorithm);

  LoweredJob job;
  sim::TaskGraph& g = job.graph;

  // Replicas that price the same (GPU types, tensor-parallel ring, pipeline hops) fold.
  std::map<std::string, int> class_of_signature;
  std::vector<std::vector<int>> classes;
  for (int r = 0; r < d; ++r) {
    std::string sig = options.fold_symmetric ? "" : std::to_string(r);
    for (int s = 0; s < p; ++s) {
      for (int k = 0; k < K; ++k) {
        if (std::find(options.distinct_gpus.begin(), options.distinct_gpus.end(), gpu(s, r, k)) !=
            options.distinct_gpus.end())
          sig += "!" + std::to_string(gpu(s, r, k));
        sig += cluster.gpus[gpu(s, r, k)].spec->name + ",";
        const auto ring = cluster.network.path_cost(host(s, r, k), host(s, r, k / t * t + (k % t + 1) % t));
        sig += exact(ring.latency_s) + "/" + exact(ring.bottleneck_Bps) + ";";
      }
      sig += "|";
    }
    for (int vs = 0; vs + 1 < V; ++vs) {
      if (!has_next(vs)) continue;
      const int a = host(gpu_stage(vs), r, 0), z = host(gpu_stage(vs + 1), r, 0);
      for (const auto& c : {cluster.network.path_cost(a, z), cluster.network.path_cost(z, a)})
        sig += exact(c.latency_s) + "/" + exact(c.bottleneck_Bps) + ";";
    }
    auto [it, fresh] = class_of_signature.emplace(sig, static_cast<int>(classes.size()));
    if (fresh) classes.emplace_back();
    classes[it->second].push_back(r);
  }
  const int nc = static_cast<int>(classes.size());
  check_task_count(work, plan, nc, fused);

  // Parameters per GPU of each pipeline GPU (all its chunks), and the experts' part.
  std::vector<double> params(p, 0.0), expert_params(p, 0.0);
  for (int vs = 0; vs < V; ++vs) {
    params[gpu_stage(vs)] += work[vs].params_per_gpu;
    expert_params[gpu_stage(vs)] += work[vs].expert_params_per_gpu;
  }
  const int ep = plan.ep;
  // Expert-parallel groups: ep consecutive replicas, one all-to-all per tensor-parallel rank.
  auto ep_groups = [&](int s) {
    sim::CommSet set;
    for (int r0 = 0; r0 < d; r0 += ep)
      for (int k = 0; k < K; ++k) {
        std::vector<int> group;
        for (int i = 0; i < ep; ++i) group.push_back(host(s, r0 + i, k));
        set.groups.push_back(group);
      }
    return set;
  };
  for (double x : params) job.params_per_gpu_max = std::max(job.params_per_gpu_max, x);

  const int compute = g.stream("compute"), tp_stream = g.stream("tp-comm");
  const int pp_stream = g.stream("pp-comm"), dp_stream = g.stream("dp-comm");
  const int ep_stream = ep > 1 ? g.stream("ep-comm") : -1;
  std::vector<int> ep_set(p, -1), ep_participants(p, -1);
  const int cp_stream = cp > 1 ? g.stream("cp-comm") : -1;
  std::vector<int> cp_set(p, -1);  // context groups: per replica and tensor rank, over cp
  const bool cp_ring = cp > 1 && plan.cp_comm == "ring";
  job.roles.resize(cluster.gpu_count());
  std::vector<std::vector<int>> dev(p, std::vector<int>(nc)), self(p, std::vector<int>(nc)), tp_set(p, std::vector<int>(nc));
  std::vector<std::vector<int>> cp_next(p, std::vector<int>(nc, -1));  // ring attention: each context rank to the next
  const ModelStateBytes state = model_state_per_param(model.dtype, plan.zero, dpc);
  // Experts (with ep > 1) are held by d / ep replicas only: ZeRO shards their states that way.
  const int dpe = plan.ep > 1 ? d / plan.ep * cp : dpc;
  const ModelStateBytes expert_state = model_state_per_param(model.dtype, plan.zero, dpe);
  for (int s = 0; s < p; ++s) {
    for (int c = 0; c < nc; ++c) {
      std::vector<int> hosts;
      sim::CommSet rings;
      double capacity = 0, reserved = 0;
      for (int r : classes[c]) {
        for (int k = 0; k < K; ++k) {
          hosts.push_back(host(s, r, k));
          const double mem = cluster.gpus[gpu(s, r, k)].spec->memory_bytes;
          capacity = capacity == 0 ? mem : std::min(capacity, mem);
          reserved = std::max(reserved, cluster.gpus[gpu(s, r, k)].reserved_bytes);
        }
        for (int x = 0; x < cp; ++x) {  // one tensor-parallel ring per context rank
          std::vector<int> ring;
          for (int k = 0; k < t; ++k) ring.push_back(host(s, r, x * t + k));
          rings.groups.push_back(ring);
        }
      }
      std::stable_partition(hosts.begin(), hosts.end(), [&](int h) {
        for (int x : options.distinct_gpus)
          if (cluster.gpus[x].host == h) return true;
        return false;
      });
      dev[s][c] = g.add_device("stage" + std::to_string(s) + ".dp" + std::to_string(classes[c][0]), hosts);
      sim::Device& device = g.device(dev[s][c]);
      device.capacity_bytes = capacity;
      // Model states; ZeRO shards optimizer state (1), gradients (2) and weights (3).
      const double dense = params[s] - (plan.ep > 1 ? expert_params[s] : 0), experts = params[s] - dense;
      device.resident = {{"weights", dense * state.weights + experts * expert_state.weights},
                         {"gradients", dense * state.gradients + experts * expert_state.gradients},
                         {"optimizer", dense * state.optimizer + experts * expert_state.optimizer}};
      if (reserved > 0) device.resident.push_back({"runtime (context, workspaces)", reserved});
      // Asynchronous pipelines keep older weight versions for the backwards in flight.
      if (const int versions = schedule->weight_versions(s, p); versions > 1)
        device.resident.push_back({"stashed weights", (versions - 1) * params[s] * state.weights});
      self[s][c] = g.add_participants({dev[s][c]});
      tp_set[s][c] = g.add_comm_set(std::move(rings));
      if (cp_ring) {
        sim::CommSet next;
        for (int r : classes[c])
          for (int x = 0; x < cp; ++x)
            for (int k = 0; k < t; ++k) next.groups.push_back({host(s, r, x * t + k), host(s, r, (x + 1) % cp * t + k)});
        cp_next[s][c] = g.add_comm_set(std::move(next));
      }
      if ((ep > 1 || cp > 1) && c == nc - 1) {
        ep_participants[s] = g.add_participants(dev[s]);
        if (ep > 1) ep_set[s] = g.add_comm_set(ep_groups(s));
        if (cp > 1) {
          sim::CommSet groups;
          for (int r = 0; r < d; ++r)
            for (int k = 0; k < t; ++k) {
              std::vector<int> group;
              for (int x = 0; x < cp; ++x) group.push_back(host(s, r, x * t + k));
              groups.groups.push_back(group);
            }
          cp_set[s] = g.add_comm_set(std::move(groups));
        }
      }
      job.device_stage.push_back(s);
      for (int r : classes[c])
        for (int k = 0; k < K; ++k) job.roles[gpu(s, r, k)] = GpuRole{s, r, k % t, dev[s][c], k / t};
    }
  }

  // Segment durations: a tensor-parallel group moves at its slowest GPU.
  std::map<std::string, platforms::PerfModel> perf;
  auto segment_time = [&](const Segment& seg, int s, int r) {
    double worst = 0;
    for (int k = 0; k < K; ++k) {
      const platforms::GpuSpec& spec = *cluster.gpus[gpu(s, r, k)].spec;
      auto it = perf.try_emplace(spec.name, platforms::perf_model(cluster, spec)).first;
      double sum = 0;
      for (int op : seg.ops) sum += it->second.time_s(kernel_of(model.op(op), model, plan, seg.pass));
      worst = std::max(worst, sum);
    }
    return worst;
  };

  const double boundary = model.boundary_bytes_per_sample * b / cp;  // a context rank's tokens
  const int send_fwd_label = g.label("send activations to next stage");
  const int send_bwd_label = g.label("send gradients to previous stage");
  // ZeRO-3 (FSDP): weights gathered block by block, `zero_prefetch` blocks ahead, and
  // gradients reduce-scattered block by block as each microbatch's backward ends.
  const bool zero3 = plan.zero >= 3 && (dpc > 1 || dpe > 1);
  std::vector<Zero3Exchanges> zero3_at(zero3 ? p : 0);
  for (int s = 0; s < static_cast<int>(zero3_at.size()); ++s) {
    Zero3Exchanges& z = zero3_at[s];
    z.participants = g.add_participants(dev[s]);
    z.gather_stream = g.stream("param-gather");
    z.reduce_stream = dp_stream;
    z.gather_label = g.label("zero-3 gather weights");
    z.reduce_label = g.label("zero-3 reduce-scatter gradients");
    z.dense_set = g.add_comm_set(dp_rings(s));
    z.dense_shards = dpc;
    z.experts_apart = plan.ep > 1;
    if (z.experts_apart) z.expert_set = g.add_comm_set(expert_rings(s));
    z.expert_shards = dpe;
    z.element_bytes = e;
  }
  // Labels are interned once per segment and kind of task, not once per task: the 175B
  // plan emits a quarter of a million tasks from a few hundred segments.
  std::map<std::pair<const Segment*, int>, int> labels;
  auto label_of = [&](const Segment& seg, int kind, const std::function<std::string()>& text) {
    auto [it, fresh] = labels.try_emplace({&seg, kind}, -1);
    if (fresh) it->second = g.label(text());
    return it->second;
  };
  using Grid = std::vector<std::vector<std::vector<sim::TaskId>>>;  // [class][virtual stage][microbatch]
  Grid f_first, f_last, b_first, b_last, f_send, b_send, weight_first;
  for (Grid* grid : {&f_first, &f_last, &b_first, &b_last, &f_send, &b_send, &weight_first})
    grid->assign(nc, std::vector<std::vector<sim::TaskId>>(V, std::vector<sim::TaskId>(m, -1)));
  std::vector<std::vector<sim::TaskId>> last_backwards(p);  // per GPU stage, for the DP step
  // [class][virtual stage][block]: the task after which the block's gradients are complete
  // (its backward for the last microbatch), for bucketed all-reduces.
  std::vector<std::vector<std::vector<sim::TaskId>>> grads_ready(nc, std::vector<std::vector<sim::TaskId>>(V));
  for (auto& per_class : grads_ready)
    for (int vs = 0; vs < V; ++vs) per_class[vs].assign(work[vs].blocks.size(), -1);

  for (int c = 0; c < nc; ++c) {
    const int r0 = classes[c][0];
    // Pipeline sends between consecutive virtual stages, for every replica and TP rank.
    std::vector<int> fwd_set(V, -1), bwd_set(V, -1);
    std::vector<Durations> dur(V);
    for (int vs = 0; vs < V; ++vs) {
      sim::CommSet to_next, to_prev;
      for (int r : classes[c])
        for (int k = 0; k < K; ++k) {
          if (has_next(vs)) to_next.groups.push_back({host(gpu_stage(vs), r, k), host(gpu_stage(vs + 1), r, k)});
          if (has_prev(vs)) to_prev.groups.push_back({host(gpu_stage(vs), r, k), host(gpu_stage(vs - 1), r, k)});
        }
      if (has_next(vs)) fwd_set[vs] = g.add_comm_set(std::move(to_next));
      if (has_prev(vs)) bwd_set[vs] = g.add_comm_set(std::move(to_prev));
      for (const Block& blk : work[vs].blocks) {
        auto times = [&](const std::vector<Segment>& segs) {
          std::vector<double> out;
          for (const Segment& seg : segs) out.push_back(segment_time(seg, gpu_stage(vs), r0));
          return out;
        };
        dur[vs].fwd.push_back(times(blk.fwd));
        dur[vs].bwd.push_back(times(blk.bwd));
        dur[vs].recompute.push_back(times(blk.recompute));
        dur[vs].bwd_input.push_back(times(blk.bwd_input));
        dur[vs].bwd_weight.push_back(times(blk.bwd_weight));
      }
    }

    // Fused: each kind of work item of each virtual stage priced once, block by block
    // (`blocks[vs][kind][bi]`, indexed in forward order), and as a whole (`items`).
    enum Kind { kFwd, kBwd, kBwdInput, kBwdWeight, kKinds };
    std::vector<std::array<FusedItem, kKinds>> items(fused ? V : 0);
    std::vector<std::array<std::vector<FusedItem>, kKinds>> block_items(fused ? V : 0);
    if (fused) {
      for (int vs = 0; vs < V; ++vs) {
        TpSyncPricer sync(cluster.network, *tp_algorithm, g.comm_set(tp_set[gpu_stage(vs)][c]).groups.at(0), plan);
        auto add = [&](FusedItem& item, const Segment& seg, double duration) {
          item.add_compute(duration, seg.alloc_per_sample * b, seg.free_per_sample * b);
          if (t > 1 && seg.sync_bytes_per_sample > 0) item.duration_s += sync.time_s(seg.sync_bytes_per_sample * b);
        };
        const StageWork& w = work[vs];
        for (auto& per_block : block_items[vs]) per_block.assign(w.blocks.size(), FusedItem{});
        for (size_t bi = 0; bi < w.blocks.size(); ++bi) {
          const Block& blk = w.blocks[bi];
          auto& [fwd, bwd, bwd_input, bwd_weight] = block_items[vs];
          for (size_t si = 0; si < blk.fwd.size(); ++si) add(fwd[bi], blk.fwd[si], dur[vs].fwd[bi][si]);
          for (size_t si = 0; si < blk.recompute.size(); ++si) {
            add(bwd[bi], blk.recompute[si], dur[vs].recompute[bi][si]);
            add(bwd_input[bi], blk.recompute[si], dur[vs].recompute[bi][si]);
          }
          for (size_t si = 0; si < blk.bwd.size(); ++si) add(bwd[bi], blk.bwd[si], dur[vs].bwd[bi][si]);
          for (size_t si = 0; si < blk.bwd_input.size(); ++si) add(bwd_input[bi], blk.bwd_input[si], dur[vs].bwd_input[bi][si]);
          for (size_t si = 0; si < blk.bwd_weight.size(); ++si) add(bwd_weight[bi], blk.bwd_weight[si], dur[vs].bwd_weight[bi][si]);
        }
        for (int kind = 0; kind < kKinds; ++kind)
          for (size_t i = 0; i < w.blocks.size(); ++i)
            items[vs][kind].append(block_items[vs][kind][kind == kFwd ? i : w.blocks.size() - 1 - i]);
      }
    }
    const int fused_label[kKinds] = {g.label("forward"), g.label("backward"), g.label("backward (input gradients)"),
                                     g.label("backward (weight gradients)")};
    auto emit_fused_task = [&](const FusedItem& item, int kind, int D, int j, sim::TaskId& first, sim::TaskId& prev) {
      const sim::TaskId id = g.add_compute(D, compute, item.duration_s, fused_label[kind], j);
      g.add_memory(id, item.peak, item.peak - item.level);
      if (prev >= 0) g.depend(prev, id);
      if (first < 0) first = id;
      prev = id;
    };

    for (int s = 0; s < p; ++s) {
      const int D = dev[s][c];
      // One segment's compute task, its memory, and its tensor-parallel synchronisation:
      // an all-reduce, or with sequence parallelism a reduce-scatter and an all-gather.
      auto exchange = [&](const Segment& seg, bool before, int j, sim::TaskId& first, sim::TaskId& prev) {
        const double per_sample = before ? seg.ep_before_per_sample : seg.ep_after_per_sample;
        const sim::CollectiveOp op = before ? seg.ep_before_op : seg.ep_after_op;
        const int label = label_of(seg, before ? 1 : 2, [&] {
          return std::string("ep ") + sim::to_string(op) + (before ? " before " : " after ") + seg.name;
        });
        const sim::TaskId a2a = g.add_collective(ep_participants[s], ep_stream, op, ep_set[s], per_sample * b / cp, label, j);
        // Its receive buffer: the tokens arriving, held while they arrive.
        g.add_memory(a2a, per_sample * b / cp, per_sample * b / cp);
        if (prev >= 0) g.depend(prev, a2a);
        if (first < 0) first = a2a;
        prev = a2a;
      };
      auto emit = [&](const Segment& seg, double duration, int j, sim::TaskId& first, sim::TaskId& prev) {
        if (seg.ep_before_per_sample > 0) exchange(seg, true, j, first, prev);
        // Context parallelism: every rank gathers the sequence's keys and values before
        // attention, and reduce-scatters their gradients after its backward.
        auto context = [&](sim::CollectiveOp op, double per_sample, int kind) {
          const int label = label_of(seg, kind, [&] { return std::string("cp ") + sim::to_string(op) + " " + seg.name; });
          const sim::TaskId x = g.add_collective(ep_participants[s], cp_stream, op, cp_set[s], per_sample * b, label, j);
          if (prev >= 0) g.depend(prev, x);
          if (first < 0) first = x;
          prev = x;
        };
        const double kv = (seg.cp_gather_per_sample + seg.cp_scatter_per_sample) * b;  // the sequence's keys and values
        if (cp_ring && kv > 0) {
          // Ring attention: cp steps, each the attention of the local queries with one block
          // of keys and values, while the block moves on to the next rank (and, backward,
          // the block's partial gradient with it): step i + 1 waits for step i and for the
          // block's arrival; the blocks move one after another.
          const bool backward = seg.cp_scatter_per_sample > 0;
          const int send_label = label_of(seg, 22, [&] { return std::string("cp ring send ") + seg.name; });
          sim::TaskId sent = -1;
          for (int step = 0; step < cp; ++step) {
            const sim::TaskId id = g.add_compute(D, compute, duration / cp, label_of(seg, 0, [&] { return seg.name; }), j);
            g.add_memory(id, step == 0 ? seg.alloc_per_sample * b : 0, step == cp - 1 ? seg.free_per_sample * b : 0);
            if (prev >= 0) g.depend(prev, id);
            if (sent >= 0) g.depend(sent, id);
            if (step + 1 < cp) {
              const sim::TaskId x = g.add_transfer(D, cp_stream, cp_next[s][c], kv / cp * (backward ? 2 : 1), send_label, j);
              if (sent >= 0) g.depend(sent, x);
              else if (prev >= 0) g.depend(prev, x);
              sent = x;
            }
            if (first < 0) first = id;
            prev = id;
          }
        } else {
          if (seg.cp_gather_per_sample > 0) context(sim::CollectiveOp::AllGather, seg.cp_gather_per_sample, 20);
          const sim::TaskId id = g.add_compute(D, compute, duration, label_of(seg, 0, [&] { return seg.name; }), j);
          g.add_memory(id, seg.alloc_per_sample * b, seg.free_per_sample * b);
          if (prev >= 0) g.depend(prev, id);
          if (first < 0) first = id;
          prev = id;
        }
        const bool scatter = seg.cp_scatter_per_sample > 0 && !cp_ring;
        // The tensor-parallel synchronisation, then the expert-parallel exchange.
        if (t == 1 || seg.sync_bytes_per_sample <= 0) {
          if (seg.ep_after_per_sample > 0) exchange(seg, false, j, first, prev);
          if (scatter) context(sim::CollectiveOp::ReduceScatter, seg.cp_scatter_per_sample, 21);
          return;
        }
        const double bytes = seg.sync_bytes_per_sample * b / cp;
        for (sim::CollectiveOp op : tp_sync_ops(plan)) {
          const sim::TaskId sync = g.add_collective(self[s][c], tp_stream, op, tp_set[s][c], bytes,
                                                    label_of(seg, 3 + static_cast<int>(op), [&] {
                                                      return std::string("tp ") + sim::to_string(op) + " after " + seg.name;
                                                    }),
                                                    j);
          g.depend(prev, sync);
          prev = sync;
        }
        if (seg.ep_after_per_sample > 0) exchange(seg, false, j, first, prev);
        if (scatter) context(sim::CollectiveOp::ReduceScatter, seg.cp_scatter_per_sample, 21);
      };
      // ZeRO-3: a block's weights are all-gathered before each pass over it and released
      // after it; the n-th gather of this GPU waits for block n - 1 - prefetch to be done,
      // so `zero_prefetch` blocks are gathered ahead, under the compute. A pass that
      // completes the block's gradients reduce-scatters them, holding them until then.
      std::vector<sim::TaskId> block_end;  // the last task of each gathered block, in order
      size_t reduced = 0;
      auto zero3_block = [&](const Block& blk, int j, bool gathers, bool reduces, sim::TaskId& last,
                             const std::function<void()>& body) {
        if (!zero3 || blk.params_per_gpu <= 0 || (!gathers && !reduces)) return body();
        Zero3Exchanges& z = zero3_at[s];
        const size_t n = block_end.size();
        if (gathers) {
          if (n == z.gathers.size()) z.add(g, blk, true, j);  // the first class to get here emits it
          for (sim::TaskId id : z.gathers[n].ids)
            if (n > static_cast<size_t>(plan.zero_prefetch)) g.depend(block_end[n - 1 - plan.zero_prefetch], id);
        }
        const sim::TaskId begin = static_cast<sim::TaskId>(g.size());
        body();
        if (static_cast<sim::TaskId>(g.size()) == begin) throw ModelError("a block with weights has no work for ZeRO-3");
        if (gathers) {
          for (sim::TaskId id : z.gathers[n].ids) g.depend(id, begin);
          g.add_memory(last, 0, z.gathers[n].bytes);
          block_end.push_back(last);
        }
        if (reduces) {
          if (reduced == z.reductions.size()) z.add(g, blk, false, j);
          g.add_memory(begin, z.reductions[reduced].bytes, 0);
          for (sim::TaskId id : z.reductions[reduced].ids) g.depend(last, id);
          ++reduced;
        }
      };
      for (const WorkItem& item : schedule->order(s, p, m, v)) {
        const int j = item.microbatch, vs = schedule->virtual_stage(item.chunk, s, p);
        const StageWork& w = work[vs];
        sim::TaskId first = -1, last = -1;
        const int kind = !item.backward ? kFwd
                         : item.part == BackwardPart::Weight ? kBwdWeight
                         : item.part == BackwardPart::Input  ? kBwdInput
                                                             : kBwd;
        // The item's blocks in the order it runs them: forward first to last, backward back.
        const size_t nb = w.blocks.size();
        auto block_at = [&](size_t i) { return item.backward ? nb - 1 - i : i; };
        if (fused && !zero3) {
          emit_fused_task(items[vs][kind], kind, D, j, first, last);
        } else if (fused) {
          for (size_t i = 0; i < nb; ++i) {
            const size_t bi = block_at(i);
            // Weight gradients need the layer's inputs, not its weights.
            const bool reduces = kind != kFwd && completes_gradients(w.blocks[bi], kind == kBwd        ? kWhole
                                                                              : kind == kBwdInput ? kInput
                                                                                                  : kWeight);
            zero3_block(w.blocks[bi], j, kind != kBwdWeight, reduces, last,
                        [&] { emit_fused_task(block_items[vs][kind][bi], kind, D, j, first, last); });
          }
        } else if (!item.backward) {
          for (size_t bi = 0; bi < nb; ++bi)
            zero3_block(w.blocks[bi], j, true, false, last, [&] {
              for (size_t si = 0; si < w.blocks[bi].fwd.size(); ++si)
                emit(w.blocks[bi].fwd[si], dur[vs].fwd[bi][si], j, first, last);
            });
        } else if (item.part == BackwardPart::Weight) {
          // Weight gradients: after this microbatch's input-gradient pass, sent nowhere.
          for (size_t bi = nb; bi-- > 0;) {
            zero3_block(w.blocks[bi], j, false, completes_gradients(w.blocks[bi], kWeight), last, [&] {
              for (size_t si = 0; si < w.blocks[bi].bwd_weight.size(); ++si)
                emit(w.blocks[bi].bwd_weight[si], dur[vs].bwd_weight[bi][si], j, first, last);
            });
            if (j == m - 1 && last >= 0) grads_ready[c][vs][bi] = last;
          }
        } else {
          // Layer by layer from the last: replay what recomputation dropped, then backward
          // (or its input-gradient part, when the schedule splits it).
          const bool input_only = item.part == BackwardPart::Input;
          for (size_t bi = nb; bi-- > 0;) {
            const Block& blk = w.blocks[bi];
            zero3_block(blk, j, true, completes_gradients(blk, input_only ? kInput : kWhole), last, [&] {
              for (size_t si = 0; si < blk.recompute.size(); ++si) emit(blk.recompute[si], dur[vs].recompute[bi][si], j, first, last);
              const auto& segs = input_only ? blk.bwd_input : blk.bwd;
              const auto& times = input_only ? dur[vs].bwd_input[bi] : dur[vs].bwd[bi];
              for (size_t si = 0; si < segs.size(); ++si) emit(segs[si], times[si], j, first, last);
            });
            if (j == m - 1 && !input_only) grads_ready[c][vs][bi] = last;
          }
        }
        // Its place among the others: the send to the neighbouring stage, what waits for it.
        if (!item.backward) {
          f_first[c][vs][j] = first;
          f_last[c][vs][j] = last;
          if (has_next(vs)) {
            f_send[c][vs][j] = g.add_transfer(D, pp_stream, fwd_set[vs], boundary, send_fwd_label, j);
            g.depend(last, f_send[c][vs][j]);
          }
        } else if (item.part == BackwardPart::Weight) {
          if (first >= 0) weight_first[c][vs][j] = first;
          if (last >= 0) last_backwards[s].push_back(last);
        } else {
          b_first[c][vs][j] = first;
          b_last[c][vs][j] = last;
          last_backwards[s].push_back(last);
          if (has_prev(vs)) {
            b_send[c][vs][j] = g.add_transfer(D, pp_stream, bwd_set[vs], boundary, send_bwd_label, j);
            g.depend(last, b_send[c][vs][j]);
          }
        }
      }
    }
    // Across stages: a forward needs the previous stage's activations, a backward the next
    // stage's gradient and its own forward.
    for (int vs = 0; vs < V; ++vs) {
      for (int j = 0; j < m; ++j) {
        if (f_last[c][vs][j] < 0) continue;  // the microbatch runs in the other pipeline
        g.depend(f_last[c][vs][j], b_first[c][vs][j]);
        if (weight_first[c][vs][j] >= 0) g.depend(b_last[c][vs][j], weight_first[c][vs][j]);
        if (has_prev(vs)) g.depend(f_send[c][vs - 1][j], f_first[c][vs][j]);
        if (has_next(vs)) g.depend(b_send[c][vs + 1][j], b_first[c][vs][j]);
      }
    }
  }

  // Data parallelism after the last backward. With ZeRO: reduce-scatter the gradients,
  // step the optimizer on the shard, all-gather the weights (ZeRO-3 gathers them itself).
  // Otherwise the sync topology exchanges the (possibly compressed) gradients, then every
  // replica steps its optimizer.
  const int opt_label = g.label("optimizer step");
  const auto topology = sync_topologies().make(plan.data_parallel.sync);
  // Bidirectional pipelines: stage k's weights live on GPU k (down) and GPU p - 1 - k (up)
  // of every replica; GPU s all-reduces its down stage's gradients with the GPUs holding
  // the same stage, and steps once both of its stages' all-reduces are done.
  std::vector<sim::TaskId> pair_sync(pipes > 1 ? p : 0, -1);
  for (int s = 0; s < static_cast<int>(pair_sync.size()); ++s) {
    const int mirror = schedule->gpu_of(Vp + s, p);  // where the up pipeline runs stage s
    sim::CommSet set;
    for (int k = 0; k < K; ++k) {
      std::vector<int> ring;
      for (int r = 0; r < d; ++r) ring.push_back(host(s, r, k));
      for (int r = 0; r < d; ++r) ring.push_back(host(mirror, r, k));
      set.groups.push_back(ring);
    }
    std::vector<int> devices = dev[s];
    if (mirror != s) devices.insert(devices.end(), dev[mirror].begin(), dev[mirror].end());
    pair_sync[s] = g.add_collective(g.add_participants(devices), dp_stream, sim::CollectiveOp::AllReduce,
                                    g.add_comm_set(std::move(set)), work[s].params_per_gpu * e,
                                    g.label("chimera gradient all-reduce (both copies of the stage)"), -1);
    for (int x : {s, mirror})
      for (sim::TaskId id : last_backwards[x]) g.depend(id, pair_sync[s]);
  }
  for (int s = 0; s < p; ++s) {
    const double grad_bytes = params[s] * e;
    const double expert_grad_bytes = (ep > 1 ? expert_params[s] : 0) * e;
    // A data-parallel collective over the gradients' holders: the dense part over every
    // replica, the experts' part over the replicas holding the same experts.
    auto dp_collective = [&](sim::CollectiveOp op, const std::string& label, double bytes, double expert_bytes = 0) {
      std::vector<sim::TaskId> out;
      if (bytes - expert_bytes > 0 && dpc > 1)
        out.push_back(g.add_collective(g.add_participants(dev[s]), dp_stream, op, g.add_comm_set(dp_rings(s)),
                                       bytes - expert_bytes, g.label(label), -1));
      if (expert_bytes > 0 && dpe > 1)
        out.push_back(g.add_collective(g.add_participants(dev[s]), dp_stream, op, g.add_comm_set(expert_rings(s)),
                                       expert_bytes, g.label("expert " + label), -1));
      return out;
    };
    std::vector<sim::TaskId> synced = last_backwards[s];
    const double bucket = plan.data_parallel.bucket_bytes;
    double compressed = 0;  // the compressed gradients' buffer, held until the step
    if (pipes > 1) {
      synced = {pair_sync[s], pair_sync[schedule->gpu_of(Vp + s, p)]};
    } else if (dpc > 1 && bucket > 0) {
      // Buckets of consecutive blocks, in the order their gradients complete, each
      // all-reduced (or reduce-scattered under ZeRO) as soon as its last block is done,
      // under the remaining backward.
      synced.clear();
      double filled = 0, expert_filled = 0;
      std::vector<sim::TaskId> waits;
      auto flush = [&] {
        if (filled <= 0) return;
        for (sim::TaskId id : dp_collective(plan.zero >= 1 ? sim::CollectiveOp::ReduceScatter : sim::CollectiveOp::AllReduce,
                                            "dp gradient bucket", filled, expert_filled)) {
          for (sim::TaskId w : waits) g.depend(w, id);
          synced.push_back(id);
        }
        filled = expert_filled = 0;
        waits.clear();
      };
      for (int vs = s + p * (v - 1); vs >= s; vs -= p)
        for (size_t bi = work[vs].blocks.size(); bi-- > 0;) {
          filled += work[vs].blocks[bi].params_per_gpu * e;
          if (ep > 1) expert_filled += work[vs].blocks[bi].expert_params_per_gpu * e;
          for (int c = 0; c < nc; ++c)
            if (grads_ready[c][vs][bi] >= 0) waits.push_back(grads_ready[c][vs][bi]);
          if (filled >= bucket) flush();
        }
      flush();
      for (sim::TaskId id : last_backwards[s])  // and nothing steps before every backward
        if (!synced.empty()) g.depend(id, synced.back());
    } else if (zero3) {
      // Reduce-scattered block by block during the backward; the stream runs them in order.
      for (sim::TaskId id : zero3_at[s].reductions.back().ids) synced.push_back(id);
    } else if ((dpc > 1 || dpe > 1) && plan.zero >= 1) {
      synced = dp_collective(sim::CollectiveOp::ReduceScatter, "dp gradient reduce-scatter", grad_bytes, expert_grad_bytes);
      for (sim::TaskId rs : synced)
        for (sim::TaskId id : last_backwards[s]) g.depend(id, rs);
    } else if (dpc > 1) {
      std::vector<std::pair<double, double>> matrices;
      for (int vs = s; vs < V; vs += p) matrices.insert(matrices.end(), work[vs].matrices.begin(), work[vs].matrices.end());
      const Compression z = compress(plan.data_parallel, grad_bytes, model.dtype, matrices);
      std::vector<sim::TaskId> ready = last_backwards[s];
      if (plan.data_parallel.compression != "none") {
        ready.clear();
        for (int c = 0; c < nc; ++c) {
          const platforms::GpuSpec& spec = *cluster.gpus[gpu(s, classes[c][0], 0)].spec;
          auto it = perf.try_emplace(spec.name, platforms::perf_model(cluster, spec)).first;
          const sim::TaskId id = g.add_compute(dev[s][c], compute, it->second.time_s(z.kernel),
                                               g.label("compress gradients (" + plan.data_parallel.compression + ")"), -1);
          g.add_memory(id, z.wire_bytes, 0);
          for (sim::TaskId b : last_backwards[s]) g.depend(b, id);
          ready.push_back(id);
        }
        compressed = z.wire_bytes;
      }
      std::vector<std::vector<int>> hosts;  // every (replica, context rank) is a gradient holder
      for (int r = 0; r < d; ++r)
        for (int x = 0; x < cp; ++x) {
          hosts.emplace_back();
          for (int k = 0; k < t; ++k) hosts.back().push_back(host(s, r, x * t + k));
        }
      // With expert parallelism the experts' gradients are shared only by the replicas
      // holding the same experts (every ep-th one): they get their own exchange, of the
      // same compression as the rest.
      const double expert_wire = grad_bytes > 0 ? z.wire_bytes * expert_grad_bytes / grad_bytes : 0;
      SyncContext ctx{g, dp_stream, dev[s], hosts, z.wire_bytes - expert_wire, z.sparse, plan.data_parallel};
      synced = topology->emit(ctx, ready);
      // Gathered (top-k) gradients arrive from every other holder: a receive buffer each.
      // An all-gather's size is its output, every holder's part: the others' are (n-1)/n.
      if (z.sparse && plan.data_parallel.sync == "all-reduce")
        for (sim::TaskId id : synced) {
          const double in = g.task(id).bytes * (dpc - 1) / dpc;
          g.add_memory(id, in, in);
        }
      if (expert_wire > 0 && dpe > 1) {
        // Top-k values travel gathered, not reduced, as in the dense exchange.
        const auto op = z.sparse ? sim::CollectiveOp::AllGather : sim::CollectiveOp::AllReduce;
        const sim::TaskId id = g.add_collective(g.add_participants(dev[s]), dp_stream, op, g.add_comm_set(expert_rings(s)),
                                                expert_wire, g.label("expert gradient all-reduce"), -1);
        for (sim::TaskId r : ready) g.depend(r, id);
        synced.push_back(id);
      }
    }
    // The optimizer steps the shard ZeRO leaves it: dense over dp·cp, experts over dp/ep·cp.
    const double stepped = plan.zero >= 1 ? (grad_bytes - expert_grad_bytes) / e / dpc + expert_grad_bytes / e / dpe
                                          : params[s];
    std::vector<sim::TaskId> steps;
    for (int c = 0; c < nc; ++c) {
      const platforms::GpuSpec& spec = *cluster.gpus[gpu(s, classes[c][0], 0)].spec;
      auto it = perf.try_emplace(spec.name, platforms::perf_model(cluster, spec)).first;
      const sim::Kernel k{sim::OpClass::Optimizer, 0, stepped * kOptimizerBytesPerParam, model.dtype};
      const sim::TaskId step = g.add_compute(dev[s][c], compute, it->second.time_s(k), opt_label, -1);
      if (compressed > 0) g.add_memory(step, 0, compressed);
      for (sim::TaskId id : synced) g.depend(id, step);
      steps.push_back(step);
    }
    if (plan.zero == 1 || plan.zero == 2)
      for (sim::TaskId gather : dp_collective(sim::CollectiveOp::AllGather, "dp weight all-gather", grad_bytes, expert_grad_bytes))
        for (sim::TaskId step : steps) g.depend(step, gather);
  }
  g.finalize();

  const double samples = plan.global_batch_size;
  job.model_flops = model.model_flops(samples);
  job.hardware_flops = job.model_flops;
  for (int vs = 0; vs < Vp; ++vs)  // one copy of the model, however many pipelines run it
    for (const Block& blk : work[vs].blocks)
      for (const Segment& seg : blk.recompute)
        for (int op : seg.ops)
          if (model.op(op).counts_as_model_flops) job.hardware_flops += model.op(op).fwd_flops * samples;
  return job;
}

std::vector<BlockItems> block_items(const ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                                    int stage, const std::string& collective_algorithm, bool split_backward) {
  Plan whole = plan;
  whole.pp = 1;
  whole.virtual_stages = 1;
  whole.stages.clear();
  const std::vector<StageWork> work = build_stage_work(model, whole, split_backward);
  const int t = plan.tp, K = plan.tp * plan.cp;
  const double b = plan.micro_batch_size;
  std::vector<platforms::PerfModel> perf;
  std::vector<int> ring;
  for (int k = 0; k < K; ++k) {
    const auto& slot = cluster.gpus.at(gpu_index(plan, stage, 0, k));
    perf.push_back(platforms::perf_model(cluster, *slot.spec));
    if (k < t) ring.push_back(slot.host);
  }
  const auto algorithm = sim::collective_algorithms().make(collective_algorithm);
  TpSyncPricer sync(cluster.network, *algorithm, ring, plan);
  // As lower()'s fused items: each segment's compute and memory, then its synchronisation.
  auto add = [&](ItemCost& item, const Segment& seg) {
    double worst = 0;
    for (const auto& pm : perf) {
      double sum = 0;
      for (int op : seg.ops) sum += pm.time_s(kernel_of(model.op(op), model, plan, seg.pass));
      worst = std::max(worst, sum);
    }
    item.add_compute(worst, seg.alloc_per_sample * b, seg.free_per_sample * b);
    if (t > 1 && seg.sync_bytes_per_sample > 0) item.duration_s += sync.time_s(seg.sync_bytes_per_sample * b / plan.cp);
  };
  std::vector<BlockItems> out;
  for (const Block& blk : work.at(0).blocks) {
    BlockItems c;
    c.is_layer = blk.is_layer;
    c.weight_pass = !blk.bwd_weight.empty();
    c.params_per_gpu = blk.params_per_gpu;
    for (const Segment& seg : blk.fwd) add(c.fwd, seg);
    for (const Segment& seg : blk.recompute) {
      add(c.bwd, seg);
      add(c.bwd_input, seg);
    }
    for (const Segment& seg : blk.bwd) add(c.bwd, seg);
    for (const Segment& seg : blk.bwd_input) add(c.bwd_input, seg);
    for (const Segment& seg : blk.bwd_weight) add(c.bwd_weight, seg);
    out.push_back(c);
  }
  return out;
}

std::vector<BlockCost> block_costs(const ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                                   int stage, const std::string& collective_algorithm) {
  std::vector<BlockCost> out;
  for (const BlockItems& blk : block_items(model, cluster, plan, stage, collective_algorithm, false)) {
    BlockCost c;
    c.is_layer = blk.is_layer;
    c.params_per_gpu = blk.params_per_gpu;
    c.time_s = blk.fwd.duration_s + blk.bwd.duration_s;
    c.stored_bytes = blk.fwd.level;
    c.transient_bytes = blk.bwd.peak;
    out.push_back(c);
  }
  return out;
}

ModelStateBytes model_state_per_param(sim::DType dtype, int zero, double shards) {
  const double e = sim::dtype_bytes(dtype);
  const double optimizer = e < 4 ? 12 : 8;  // fp32 master copy (unless the model is fp32), momentum, variance
  return {e / (zero >= 3 ? shards : 1), e / (zero >= 2 ? shards : 1), optimizer / (zero >= 1 ? shards : 1)};
}

std::vector<sim::CollectiveOp> tp_sync_ops(const Plan& plan) {
  if (plan.sequence_parallel) return {sim::CollectiveOp::ReduceScatter, sim::CollectiveOp::AllGather};
  return {sim::CollectiveOp::AllReduce};
}

}  // namespace dejavu::strategies
