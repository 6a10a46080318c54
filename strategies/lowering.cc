#include "strategies/lowering.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "platforms/perf_model.h"
#include "strategies/schedules/schedule.h"

namespace dejavu::strategies {

namespace {

using workloads::ModelGraph;
using workloads::Op;

// Mixed-precision Adam touches about 28 bytes per parameter per step: reads and writes
// fp32 master weights, momentum and variance (24), reads the bf16 gradient and writes the
// bf16 weight (4).
constexpr double kOptimizerBytesPerParam = 28;

struct Segment {
  std::vector<int> ops;
  double sync_bytes_per_sample = 0;  // tensor-parallel all-reduce after the segment
  int label = -1;
  int sync_label = -1;
};

struct StageWork {
  std::vector<int> ops;
  std::vector<Segment> fwd, bwd, recompute;
  double params_per_gpu = 0;
};

// Contiguous layers per stage, the first L % p stages taking one more; ops before the
// layers go to the first stage, ops after them to the last.
std::vector<int> stage_of_ops(const ModelGraph& m, const std::vector<int>& order, int p) {
  const int L = m.layers, base = L / p, extra = L % p;
  std::vector<int> layer_stage(std::max(L, 1), 0);
  for (int s = 0, l = 0; s < p; ++s)
    for (int k = 0; k < base + (s < extra ? 1 : 0); ++k) layer_stage[l++] = s;
  std::vector<int> stage(m.size(), 0);
  for (int v : order) {
    const int layer = m.op(v).layer;
    stage[v] = layer < 0 ? 0 : layer >= L ? p - 1 : layer_stage[layer];
  }
  return stage;
}

std::vector<Segment> cut(const ModelGraph& m, const std::vector<int>& ops, bool backward,
                         bool at_syncs) {
  std::vector<Segment> out(1);
  for (int v : ops) {
    const Op& op = m.op(v);
    out.back().ops.push_back(v);
    const bool sync = backward ? op.tp_sync_bwd : op.tp_sync_fwd;
    if (at_syncs && sync) {
      out.back().sync_bytes_per_sample = op.tp_sync_bytes;
      out.emplace_back();
    }
  }
  if (out.back().ops.empty()) out.pop_back();
  return out;
}

sim::Kernel kernel_of(const Op& op, bool backward, int b, int t, sim::DType dtype) {
  const double split = op.tp == workloads::TpMode::Split ? t : 1;
  sim::Kernel k;
  k.op_class = op.op_class;
  k.dtype = dtype;
  k.flops = (backward ? op.bwd_flops : op.fwd_flops) * b / split;
  // Backward reads the weights for the input gradient and writes the weight gradient.
  k.bytes = ((backward ? op.bwd_bytes : op.fwd_bytes) * b +
             op.weight_bytes * (backward ? 2 : 1)) / split;
  return k;
}

std::string segment_name(const ModelGraph& m, const Segment& s, const char* pass) {
  const std::string& a = m.op(s.ops.front()).name;
  const std::string& z = m.op(s.ops.back()).name;
  return std::string(pass) + " " + (a == z ? a : a + ".." + z);
}

std::string exact(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

}  // namespace

LoweredJob lower(const ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                 const LowerOptions& options) {
  validate(plan, model, cluster);
  const int p = plan.pp, d = plan.dp, t = plan.tp, m = plan.microbatches();
  const int b = plan.micro_batch_size;
  const bool recompute = plan.recompute == "full";
  const auto schedule = schedules().make(plan.schedule);
  const std::vector<int> order = model.topological_order();
  const std::vector<int> stage_of = stage_of_ops(model, order, p);
  auto gpu = [&](int s, int r, int k) { return gpu_index(plan, s, r, k); };
  auto host = [&](int s, int r, int k) { return cluster.gpus[gpu(s, r, k)].host; };

  LoweredJob job;
  sim::TaskGraph& g = job.graph;

  // Stage work: ops, segments for each pass, parameters held per GPU.
  std::vector<StageWork> work(p);
  for (int v : order) work[stage_of[v]].ops.push_back(v);
  for (int s = 0; s < p; ++s) {
    StageWork& w = work[s];
    std::vector<int> layer_ops, reversed(w.ops.rbegin(), w.ops.rend());
    for (int v : w.ops) {
      const Op& op = model.op(v);
      w.params_per_gpu += op.params / (op.tp == workloads::TpMode::Split ? t : 1);
      if (op.layer >= 0 && op.layer < model.layers) layer_ops.push_back(v);
    }
    w.fwd = cut(model, w.ops, false, t > 1);
    w.bwd = cut(model, reversed, true, t > 1);
    if (recompute) w.recompute = cut(model, layer_ops, false, t > 1);
    for (auto [segs, pass] : {std::pair{&w.fwd, "fwd"}, {&w.bwd, "bwd"}, {&w.recompute, "recompute"}}) {
      for (Segment& seg : *segs) {
        seg.label = g.label(segment_name(model, seg, pass));
        seg.sync_label = g.label(std::string("tp all-reduce after ") + pass + " " +
                                 model.op(seg.ops.back()).name);
      }
    }
    job.params_per_gpu_max = std::max(job.params_per_gpu_max, w.params_per_gpu);
  }

  // Replicas that price the same (GPU types, tensor-parallel ring, pipeline hops) fold.
  std::map<std::string, int> class_of_signature;
  std::vector<std::vector<int>> classes;
  for (int r = 0; r < d; ++r) {
    std::string sig = options.fold_symmetric ? "" : std::to_string(r);
    for (int s = 0; s < p; ++s) {
      for (int k = 0; k < t; ++k) {
        sig += cluster.gpus[gpu(s, r, k)].spec->name + ",";
        const auto ring = cluster.network.path_cost(host(s, r, k), host(s, r, (k + 1) % t));
        sig += exact(ring.latency_s) + "/" + exact(ring.bottleneck_Bps) + ";";
      }
      if (s + 1 < p) {
        const auto hop = cluster.network.path_cost(host(s, r, 0), host(s + 1, r, 0));
        const auto back = cluster.network.path_cost(host(s + 1, r, 0), host(s, r, 0));
        sig += exact(hop.latency_s) + "/" + exact(hop.bottleneck_Bps) + "/" +
               exact(back.latency_s) + "/" + exact(back.bottleneck_Bps);
      }
      sig += "|";
    }
    auto [it, fresh] = class_of_signature.emplace(sig, static_cast<int>(classes.size()));
    if (fresh) classes.emplace_back();
    classes[it->second].push_back(r);
  }
  const int nc = static_cast<int>(classes.size());

  const int compute = g.stream("compute"), tp_stream = g.stream("tp-comm");
  const int pp_stream = g.stream("pp-comm"), dp_stream = g.stream("dp-comm");
  job.roles.resize(cluster.gpu_count());
  std::vector<std::vector<int>> dev(p, std::vector<int>(nc));
  std::vector<std::vector<int>> self(p, std::vector<int>(nc));  // participant set {dev}
  for (int s = 0; s < p; ++s) {
    for (int c = 0; c < nc; ++c) {
      std::vector<int> hosts;
      for (int r : classes[c])
        for (int k = 0; k < t; ++k) hosts.push_back(host(s, r, k));
      dev[s][c] = g.add_device("stage" + std::to_string(s) + ".dp" + std::to_string(classes[c][0]),
                               hosts);
      self[s][c] = g.add_participants({dev[s][c]});
      job.device_stage.push_back(s);
      for (int r : classes[c])
        for (int k = 0; k < t; ++k) job.roles[gpu(s, r, k)] = GpuRole{s, r, k, dev[s][c]};
    }
  }

  std::map<std::string, platforms::PerfModel> perf;
  auto segment_time = [&](const Segment& seg, bool backward, int s, int r) {
    double worst = 0;  // a tensor-parallel group moves at its slowest GPU
    for (int k = 0; k < t; ++k) {
      const platforms::GpuSpec& spec = *cluster.gpus[gpu(s, r, k)].spec;
      auto it = perf.try_emplace(spec.name, spec).first;
      double sum = 0;
      for (int v : seg.ops) sum += it->second.time_s(kernel_of(model.op(v), backward, b, t, model.dtype));
      worst = std::max(worst, sum);
    }
    return worst;
  };

  const double boundary = model.boundary_bytes_per_sample * b;
  const int send_fwd_label = g.label("send activations to next stage");
  const int send_bwd_label = g.label("send gradients to previous stage");
  std::vector<std::vector<std::vector<sim::TaskId>>> f_first, f_last, b_first, b_last, f_send, b_send;
  for (auto* v : {&f_first, &f_last, &b_first, &b_last, &f_send, &b_send})
    v->assign(nc, std::vector<std::vector<sim::TaskId>>(p, std::vector<sim::TaskId>(m, -1)));

  for (int c = 0; c < nc; ++c) {
    const int r0 = classes[c][0];
    for (int s = 0; s < p; ++s) {
      const int D = dev[s][c];
      sim::CommSet tp_set, fwd_set, bwd_set;
      for (int r : classes[c]) {
        std::vector<int> ring;
        for (int k = 0; k < t; ++k) {
          ring.push_back(host(s, r, k));
          if (s + 1 < p) fwd_set.groups.push_back({host(s, r, k), host(s + 1, r, k)});
          if (s > 0) bwd_set.groups.push_back({host(s, r, k), host(s - 1, r, k)});
        }
        tp_set.groups.push_back(ring);
      }
      const int tp_id = g.add_comm_set(std::move(tp_set));
      const int fwd_id = s + 1 < p ? g.add_comm_set(std::move(fwd_set)) : -1;
      const int bwd_id = s > 0 ? g.add_comm_set(std::move(bwd_set)) : -1;

      auto times = [&](const std::vector<Segment>& segs, bool backward) {
        std::vector<double> out;
        for (const Segment& seg : segs) out.push_back(segment_time(seg, backward, s, r0));
        return out;
      };
      const StageWork& w = work[s];
      const std::vector<double> fwd_t = times(w.fwd, false), bwd_t = times(w.bwd, true),
                                rec_t = times(w.recompute, false);
      auto emit = [&](const std::vector<Segment>& segs, const std::vector<double>& dur, int j,
                      sim::TaskId& first, sim::TaskId& prev) {
        for (size_t i = 0; i < segs.size(); ++i) {
          const sim::TaskId id = g.add_compute(D, compute, dur[i], segs[i].label, j);
          if (prev >= 0) g.depend(prev, id);
          if (first < 0) first = id;
          prev = id;
          if (t > 1 && segs[i].sync_bytes_per_sample > 0) {
            const sim::TaskId ar =
                g.add_collective(self[s][c], tp_stream, sim::CollectiveOp::AllReduce, tp_id,
                                 segs[i].sync_bytes_per_sample * b, segs[i].sync_label, j);
            g.depend(prev, ar);
            prev = ar;
          }
        }
      };

      for (const WorkItem& item : schedule->order(s, p, m)) {
        const int j = item.microbatch;
        sim::TaskId first = -1, last = -1;
        if (!item.backward) {
          emit(w.fwd, fwd_t, j, first, last);
          f_first[c][s][j] = first;
          f_last[c][s][j] = last;
          if (s + 1 < p) {
            f_send[c][s][j] = g.add_transfer(D, pp_stream, fwd_id, boundary, send_fwd_label, j);
            g.depend(last, f_send[c][s][j]);
          }
        } else {
          if (recompute) emit(w.recompute, rec_t, j, first, last);
          emit(w.bwd, bwd_t, j, first, last);
          b_first[c][s][j] = first;
          b_last[c][s][j] = last;
          if (s > 0) {
            b_send[c][s][j] = g.add_transfer(D, pp_stream, bwd_id, boundary, send_bwd_label, j);
            g.depend(last, b_send[c][s][j]);
          }
        }
      }
    }
    // Data dependencies: a forward needs its own stage's previous work only through the
    // stream; across stages it needs the activations, a backward the next stage's gradient.
    for (int s = 0; s < p; ++s) {
      for (int j = 0; j < m; ++j) {
        g.depend(f_last[c][s][j], b_first[c][s][j]);
        if (s > 0) g.depend(f_send[c][s - 1][j], f_first[c][s][j]);
        if (s + 1 < p) g.depend(b_send[c][s + 1][j], b_first[c][s][j]);
      }
    }
  }

  // Gradient all-reduce over the data-parallel group, then the optimizer step.
  const int opt_label = g.label("optimizer step");
  const int dp_label = g.label("dp gradient all-reduce");
  for (int s = 0; s < p; ++s) {
    const double params = work[s].params_per_gpu;
    sim::TaskId ar = -1;
    if (d > 1) {
      sim::CommSet set;
      for (int k = 0; k < t; ++k) {
        std::vector<int> ring;
        for (int r = 0; r < d; ++r) ring.push_back(host(s, r, k));
        set.groups.push_back(ring);
      }
      const int part = g.add_participants(dev[s]);
      ar = g.add_collective(part, dp_stream, sim::CollectiveOp::AllReduce,
                            g.add_comm_set(std::move(set)),
                            params * sim::dtype_bytes(model.dtype), dp_label, -1);
      for (int c = 0; c < nc; ++c)
        for (int j = 0; j < m; ++j) g.depend(b_last[c][s][j], ar);
    }
    for (int c = 0; c < nc; ++c) {
      const platforms::GpuSpec& spec = *cluster.gpus[gpu(s, classes[c][0], 0)].spec;
      auto it = perf.try_emplace(spec.name, spec).first;
      sim::Kernel k{sim::OpClass::Optimizer, 0, params * kOptimizerBytesPerParam, model.dtype};
      const sim::TaskId step = g.add_compute(dev[s][c], compute, it->second.time_s(k), opt_label, -1);
      if (ar >= 0) g.depend(ar, step);
      else
        for (int j = 0; j < m; ++j) g.depend(b_last[c][s][j], step);
    }
  }
  g.finalize();

  const double samples = plan.global_batch_size;
  job.model_flops = model.model_flops(samples);
  job.hardware_flops = job.model_flops;
  if (recompute) {
    for (int v : order) {
      const Op& op = model.op(v);
      if (op.counts_as_model_flops && op.layer >= 0 && op.layer < model.layers)
        job.hardware_flops += op.fwd_flops * samples;
    }
  }
  return job;
}

}  // namespace dejavu::strategies
