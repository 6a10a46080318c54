#include "strategies/lowering/zero3.h"

#include <array>

#include "sim/error.h"

namespace dejavu::strategies::lowering {

bool completes_gradients(const Block& blk, BackwardPass pass) {
  if (pass == BackwardPass::Whole) return true;
  return (pass == BackwardPass::Weight) == !blk.bwd_weight.empty();
}

bool Zero3Stage::applies(const JobLayout& L) { return L.plan.zero >= 3 && (L.dpc > 1 || L.dpe > 1); }

Zero3Stage::Zero3Stage(sim::TaskGraph& g, const JobLayout& L, int s) : g_(g), L_(L), s_(s) {
  participants_ = g.add_participants(L.dev[s]);
  fetch_stream_ = g.stream("param-fetch");
  gather_label_ = g.label("zero-3 gather weights");
  reduce_label_ = g.label("zero-3 reduce-scatter gradients");
  dense_set_ = g.add_comm_set(L.dp_rings(s));
  if (L.plan.hybrid_sharded()) {
    across_set_ = g.add_comm_set(L.across_shard_rings(s));
    across_label_ = g.label("zero-3 all-reduce gradient shards across shard groups");
  }
  if (L.plan.ep > 1) expert_set_ = g.add_comm_set(L.expert_rings(s));
  if (L.plan.offload_parameters.empty()) return;
  std::vector<int> replicas(L.d);
  for (int r = 0; r < L.d; ++r) replicas[r] = r;
  fetch_set_ = g.add_comm_set(L.host_copies(s, replicas, false));
  fetch_label_ = g.label("zero-3 weights from CPU memory");
  read_label_ = g.label("zero-3 weights read from NVMe");
}

// Every GPU's shard of a block in from the host: read from NVMe (the server's GPUs sharing
// its bandwidth), then copied over PCIe; returns the tasks, in order.
std::vector<sim::TaskId> Zero3Stage::fetch(double shard_bytes, int j) {
  std::vector<sim::TaskId> out;
  const sim::DeviceId dev = L_.dev[s_][0];
  if (L_.plan.offload_parameters == "nvme") {
    const platforms::ServerGroup& server = L_.cluster.group_of(L_.gpu(s_, 0, 0));
    const double read_s = shard_bytes * server.gpus_per_server / server.host.nvme_Bps;
    out.push_back(g_.add_compute(dev, fetch_stream_, read_s, read_label_, j));
  }
  out.push_back(g_.add_transfer(dev, fetch_stream_, fetch_set_, shard_bytes, fetch_label_, j));
  if (out.size() == 2) g_.depend(out[0], out[1]);
  return out;
}

// A block's dense weights (or gradients) over every replica (HSDP: its shard group), its
// experts' over the replicas holding them.
std::array<Zero3Stage::Share, 2> Zero3Stage::shares(const Block& blk, bool gradients) const {
  const double e = gradients ? L_.gradient_bytes : L_.element_bytes;
  const double experts = L_.plan.ep > 1 ? blk.expert_params_per_gpu * e : 0;
  return {Share{blk.params_per_gpu * e - experts, L_.dps, dense_set_}, Share{experts, L_.dpe, expert_set_}};
}

void Zero3Stage::add(const Block& blk, bool gather, int microbatch) {
  Exchange out;
  const std::array<Share, 2> parts = shares(blk, !gather);
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto& [bytes, shards, set] = parts[i];
    // HSDP: a dense reduction's shard is all-reduced across the shard groups after it.
    const bool across = !gather && i == 0 && L_.plan.hybrid_sharded();
    if (across && bytes > 0 && shards <= 1) out.ids.push_back(reduce_across(bytes, microbatch, -1));
    if (bytes <= 0 || shards <= 1) continue;
    const auto op = gather ? sim::CollectiveOp::AllGather : sim::CollectiveOp::ReduceScatter;
    const bool offloaded = gather && !L_.plan.offload_parameters.empty();
    const std::vector<sim::TaskId> fetched = offloaded ? fetch(bytes / shards, microbatch) : std::vector<sim::TaskId>{};
    out.ids.insert(out.ids.end(), fetched.begin(), fetched.end());
    const sim::TaskId id = g_.add_collective(participants_, L_.streams.dp, op, set, bytes,
                                             gather ? gather_label_ : reduce_label_, microbatch);
    if (!fetched.empty()) g_.depend(fetched.back(), id);
    const double more = offloaded ? bytes : bytes * (shards - 1) / shards;
    // Gathered weights are held from the gather; the full gradients go with their reduction.
    g_.add_memory(id, gather ? more : 0, gather ? 0 : more);
    out.ids.push_back(id);
    out.bytes += more;
    if (across) out.ids.push_back(reduce_across(bytes / shards, microbatch, id));
  }
  (gather ? gathers_ : reductions_).push_back(std::move(out));
}

// A dense gradient shard all-reduced across HSDP's shard groups, after `after` (if any).
sim::TaskId Zero3Stage::reduce_across(double shard_bytes, int microbatch, sim::TaskId after) {
  const sim::TaskId id = g_.add_collective(participants_, L_.streams.dp, sim::CollectiveOp::AllReduce, across_set_,
                                           shard_bytes, across_label_, microbatch);
  if (after >= 0) g_.depend(after, id);
  return id;
}

double Zero3Stage::reduced_bytes(const Block& blk) const {
  double more = 0;
  for (const auto& [bytes, shards, set] : shares(blk, true))
    if (bytes > 0 && shards > 1) more += bytes * (shards - 1) / shards;
  return more;
}

// The n-th gather of this GPU waits for its block n - 1 - prefetch to be done (in a
// backward pass without `pre`, for block n - 1: issued after its gradient computation);
// the block's first task waits for its gather; the gathered weights go at the block's end.
// A pass that completes the gradients holds them from its start to their reduction,
// issued after the next block's gather (`none`: before it) or when the item ends.
// Without resharding after the forward, a block's backward does not gather: it releases, at
// its end, what the block's forward of that microbatch gathered.
void Zero3Device::block(const Block& blk, int j, bool backward, bool gathers, bool reduces, Chain& chain,
                        const std::function<void()>& body) {
  const bool kept = stage_ && !stage_->L_.plan.zero_reshard_after_forward;
  const bool releases = kept && backward && gathers;
  if (releases) gathers = false;
  if (!stage_ || blk.params_per_gpu <= 0 || (!gathers && !reduces && !releases)) return body();
  Zero3Stage& z = *stage_;
  const int prefetch = z.L_.plan.zero_gather_ahead(backward);
  if (z.L_.plan.zero_reduces_before_gather(backward)) finish();
  const size_t n = block_end_.size();
  if (gathers) {
    if (n == z.gathers_.size()) z.add(blk, true, j);  // the first class to get here emits it
    for (sim::TaskId id : z.gathers_[n].ids)
      if (n > static_cast<size_t>(prefetch)) g_.depend(block_end_[n - 1 - prefetch], id);
  }
  finish();
  const sim::TaskId begin = static_cast<sim::TaskId>(g_.size());
  body();
  if (static_cast<sim::TaskId>(g_.size()) == begin) throw ModelError("a block with weights has no work for ZeRO-3");
  if (gathers) {
    for (sim::TaskId id : z.gathers_[n].ids) g_.depend(id, begin);
    if (kept)
      held_[{&blk, j}] = z.gathers_[n].bytes;
    else
      g_.add_memory(chain.last, 0, z.gathers_[n].bytes);
    block_end_.push_back(chain.last);
  }
  if (const auto it = held_.find({&blk, j}); releases && it != held_.end()) {
    g_.add_memory(chain.last, 0, it->second);
    held_.erase(it);
  }
  if (reduces) {
    g_.add_memory(begin, z.reduced_bytes(blk), 0);
    pending_ = Pending{&blk, j, chain};
  }
}

void Zero3Device::finish() {
  if (!pending_.blk) return;
  Zero3Stage& z = *stage_;
  if (reduced_ == z.reductions_.size()) z.add(*pending_.blk, false, pending_.microbatch);
  for (sim::TaskId id : z.reductions_[reduced_].ids) pending_.after.wait(g_, id);
  ++reduced_;
  pending_ = Pending{};
}

}  // namespace dejavu::strategies::lowering
