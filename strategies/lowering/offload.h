// Optimizer offload: ZeRO-Offload (`offload: {optimizer: cpu}`) keeps the fp32 optimizer
// states and the fp32 gradient copy in the server's CPU memory and runs Adam there;
// ZeRO-Infinity (`nvme`) keeps the states on NVMe and streams them through CPU memory.
// Per GPU and step, for the parameters its optimizer steps (its ZeRO shard), in order after
// its gradients are reduced:
//   - PCIe: its gradients down (in Plan::grad_dtype) and its updated 16-bit weights up;
//   - CPU Adam: reads and writes the fp32 master weight, momentum and variance and reads the
//     fp32 gradient, 28 bytes a parameter of host memory traffic, the server's GPUs stepping
//     at once over its memory bandwidth;
//   - NVMe: the 12 bytes of states read before and written after, 24 a parameter, the
//     server's GPUs sharing its NVMe bandwidth.
// The copies are transfers on the network (platforms: each GPU's PCIe link to its switch,
// which its NIC shares, and the switch's to the CPU), so they contend with the NIC's traffic;
// `seconds` is their closed form without contention plus `host_seconds`, the CPU's part.
// ZeRO-Offload overlaps the gradients' copy down with the backward; that is not modelled,
// so the step is an upper bound. Held per server: CPU memory 16 bytes a parameter (cpu: the
// states and the gradient) or 4 (nvme: the gradient), NVMe 12 (nvme).
#pragma once

#include <string>

#include "platforms/cluster.h"

namespace dejavu::strategies {

struct OffloadCost {
  double pcie_bytes = 0;          // per GPU per step, both directions
  double host_traffic_bytes = 0;  // per GPU per step, CPU Adam's memory traffic
  double nvme_traffic_bytes = 0;  // per GPU per step
  double host_held_bytes = 0;     // per server
  double nvme_held_bytes = 0;     // per server
  double seconds = 0;             // the offloaded step: PCIe without contention + host_seconds
  double host_seconds = 0;        // CPU Adam and NVMe
};

OffloadCost offload_cost(const std::string& tier, const platforms::ServerGroup& server, double params,
                         double element_bytes, double gradient_bytes);

// Whether what a server holds fits its CPU memory and NVMe.
bool fits_host(const OffloadCost& cost, const platforms::ServerGroup& server);

}  // namespace dejavu::strategies
