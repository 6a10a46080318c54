// How data-parallel replicas exchange gradients after the last backward: a sync topology
// (a registry entry) and an optional gradient compression that shrinks the payload at the
// cost of compute.
//
//   data_parallel:
//     sync: parameter-server   # all-reduce | parameter-server | rolling-parameter-server | gossip
//     servers: 1               # parameter-server: shards, served by the first replicas
//     peers: 2                 # gossip: partners per step, drawn with `seed`
//     step: 0                  # the training step: rolling PS rotates its servers, gossip redraws
//     compression: topk        # a registry entry (`dejavu list`); topk takes density, powersgd rank
//     density: 0.01
//
// Parameter-server shards live on the first `servers` replicas' GPUs (same tensor-parallel
// rank): every other replica pushes S/servers to each and pulls as much back, so one
// server's link carries 2·S·(dp-1) bytes a step. The rolling parameter server cuts the
// gradient into dp shards and gives shard j to replica (j + step) mod dp, so every link
// carries 2·S·(dp-1)/dp and the role moves every step. Gossip sends the whole gradient to
// `peers` partners drawn afresh each step from a seeded generator.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/network.h"
#include "sim/registry.h"
#include "sim/task_graph.h"
#include "strategies/compression/compressor.h"
#include "strategies/plan.h"

namespace dejavu::strategies {

struct SyncContext {
  sim::TaskGraph& graph;
  sim::StreamId stream;                 // the data-parallel stream
  std::vector<sim::DeviceId> devices;   // the stage's simulated devices
  std::vector<std::vector<int>> hosts;  // [replica][tensor-parallel rank] -> network host
  double bytes;                         // gradient payload per GPU, after compression
  bool sparse;                          // payloads differ per replica: gather, don't reduce
  const Plan::DataParallel& config;
};

class SyncTopology {
 public:
  virtual ~SyncTopology() = default;
  // Emits the exchange after `ready`; returns what the optimizer step must wait for.
  virtual std::vector<sim::TaskId> emit(SyncContext& ctx, const std::vector<sim::TaskId>& ready) const = 0;
  // Whether every replica ends the step with the exact average of all gradients, so the
  // update rule is synchronous SGD's and a faster step is a faster run (gossip's is not).
  virtual bool averages_exactly() const { return true; }
  // Whether it reads DataParallel::servers (how many shards the parameter server has).
  virtual bool takes_servers() const { return false; }
};

Registry<SyncTopology>& sync_topologies();
void register_sync_topologies();

// The plan's compression (strategies/compression/) priced for one GPU's gradient.
// `matrices`: the GPU's weight matrices (rows, columns), for PowerSGD's low-rank factors.
Compression compress(const Plan::DataParallel& config, double gradient_bytes, sim::DType dtype,
                     const std::vector<std::pair<double, double>>& matrices);

}  // namespace dejavu::strategies
