// A cluster of GPU servers, read from platform YAML and built into a sim::Network.
//
//   name: dgx-a100-4x8
//   servers:                        # one entry per group of identical servers
//     - count: 4
//       gpu: A100-SXM-80GB
//       gpus_per_server: 8
//       intra: {kind: nvswitch, bandwidth: 300 GB/s, latency: 1 us}  # per GPU, per direction
//       nic: {bandwidth: 200 Gbps, latency: 2 us, per_gpu: true}
//       step_latency: 0 us        # optional; intra and nic also take `efficiency` (0..1]
//                                 # and intra (nvswitch) `nvls: {bandwidth, latency}`
//   network: {kind: fat-tree, latency: 1 us, oversubscription: 1}
//
// Inside a server: an NVSwitch joined to each GPU by an `intra` link; or, for `pcie`, PCIe
// switches of `gpus_per_switch` GPUs each, joined to the server's root complex by
// `switch_uplink` links. NICs hang off each GPU (`per_gpu: true`, rail style) or one NIC off
// the server switch / root complex (`per_gpu: false`, shared).
//
// Between servers (`network.kind`):
//   fat-tree / leaf-spine  NICs join a leaf switch shared by `servers_per_leaf` servers
//                          (default 1); each leaf reaches the spine over an uplink of its
//                          NICs' total bandwidth divided by `oversubscription`.
//   rail-optimized         NIC i of every server joins rail switch i; rails reach the
//                          spine over uplinks of their NICs' total / oversubscription.
//                          With `servers_per_leaf` (a scalable unit), multi-plane: rail i
//                          of each unit has its own switch, a rail's switches meet at the
//                          spine of plane i (uplinks: NICs' total / oversubscription), and
//                          the planes at the top spine (the plane's uplinks' total /
//                          oversubscription again). Real multi-plane fabrics have no top
//                          spine and forward cross-rail traffic over NVLink (NCCL's PXN);
//                          here it crosses the top (NCCL's rings stay on their rail).
// Latencies are end to end: GPU to GPU inside a server takes intra.latency; through a
// leaf or rail, nic.latency; through the spine, nic.latency + network.latency.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "platforms/gpu_catalog.h"
#include "platforms/perf_model.h"
#include "sim/config_node.h"
#include "sim/network.h"
#include "sim/task_graph.h"

namespace dejavu::platforms {

struct IntraSpec {
  // nvswitch | xgmi | pcie. xgmi (AMD's fully connected 8-GPU servers) is built as nvswitch
  // is, each GPU's links to its peers joined as one port of `bandwidth` (RCCL's rings use
  // them all at once): collectives see the aggregate; one transfer between two GPUs, which
  // really has one link, is not held to it.
  std::string kind = "nvswitch";
  double bandwidth_Bps = 0;
  double latency_s = 0;
  double efficiency = 1;         // fraction of the bandwidth data gets (protocol overhead)
  int gpus_per_switch = 0;       // pcie: GPUs behind one PCIe switch (0: all)
  double switch_uplink_Bps = 0;  // pcie: switch to root complex (0: bandwidth)
  // nvswitch: `nvls: {bandwidth, latency}`, the switch's own all-reduce (NVLink SHARP, NCCL's
  // NVLS algorithm, sim/collectives/nvls.cc): its rate (S over it, S the buffer) and latency.
  double nvls_Bps = 0, nvls_latency_s = 0;
};

struct NicSpec {
  double bandwidth_Bps = 0;
  double efficiency = 1;  // with `protocol`, times its framing efficiency (platforms/nic_protocol.h)
  std::string protocol;   // infiniband | roce; empty: the bandwidth is all data
  double mtu = 4096;      // payload bytes a packet
  double latency_s = 0;
  bool per_gpu = true;
};

// A server's host side, where ZeRO-Offload and ZeRO-Infinity put the optimizer: CPU memory
// and its bandwidth (CPU Adam runs there, bound by it), each GPU's PCIe link to it (per
// direction), NVMe. 0: not given; offloading to it is refused.
struct HostSpec {
  double memory_bytes = 0, memory_Bps = 0, pcie_Bps = 0, nvme_bytes = 0, nvme_Bps = 0;
};

struct ServerGroup {
  int count = 1;
  std::string gpu;
  int gpus_per_server = 8;
  IntraSpec intra;
  NicSpec nic;
  // Software cost of one collective step on these GPUs (NCCL kernel launch, proxy and
  // protocol handshakes), paid by every step a GPU sends; with `efficiency` it is what a
  // preset fits so its all-reduce curve matches nccl-tests on that server type.
  double step_latency_s = 0;
  // Memory a process holds on each GPU before the model's first byte (`reserved_memory`:
  // what nvidia-smi shows for an idle training process on the user's machines); < 0: the
  // GPU type's measured CUDA context and NCCL buffers (gpu_catalog.h).
  double reserved_bytes = -1;
  HostSpec host;  // `host: {memory, memory_bandwidth, pcie, nvme, nvme_bandwidth}`
};

struct FabricSpec {
  std::string kind = "fat-tree";  // fat-tree | leaf-spine | rail-optimized
  double latency_s = 0;
  double oversubscription = 1;
  int servers_per_leaf = 1;  // rail-optimized: 0 = every server on one switch per rail
};

struct GpuSlot {
  int host = -1;    // node id in the network
  int server = -1;  // global server index
  int local = -1;   // index inside the server
  const GpuSpec* spec = nullptr;
  // What the process holds before the model (CUDA context, NCCL buffers; or the group's
  // reserved_memory), as named parts for the memory breakdown.
  std::vector<sim::MemoryPart> runtime;
  double runtime_bytes() const;
  int group = -1;  // its server's group, an index into Cluster::groups (host side, GPUs per server)
  int cpu = -1;    // its server's host side (CPU memory) on the network; -1 without host.pcie
};

struct Cluster {
  std::string name;
  std::vector<ServerGroup> groups;
  FabricSpec fabric;
  std::vector<GpuSlot> gpus;  // in server order, then local order
  const ServerGroup& group_of(int gpu) const { return groups.at(gpus.at(gpu).group); }
  sim::Network network;
  // Checkpoint storage (`storage: {bandwidth: 10 GB/s}`): aggregate write and read rate the
  // whole job sees. Default 10 GB/s, a parallel file system's share for one job.
  double storage_bandwidth_Bps = 10e9;
  // Calibrated kernel efficiencies per GPU type (`--calibration`); absent: the defaults.
  std::map<std::string, Efficiency> efficiency;
  // The calibration files applied to each GPU type, in the order given (file names only).
  std::map<std::string, std::vector<std::string>> calibrated_from;

  int gpu_count() const { return static_cast<int>(gpus.size()); }
  int server_count() const;
  // The servers that share leaf switches (a leaf of a fat-tree, a scalable unit of rails):
  // server s is in unit s / servers_per_unit(). Traffic inside a unit never crosses a spine.
  int servers_per_unit() const;
};

// Builds gpus and network from groups and fabric.
void build_network(Cluster& cluster);

Cluster load_cluster(const ConfigNode& root);
Cluster load_cluster_file(const std::string& path);

}  // namespace dejavu::platforms
