// A GPU's SMs shared between compute and communication kernels. NCCL runs a collective, or
// a send or receive between GPUs, as a kernel of one CTA per channel, and its CTAs never
// share an SM with a compute kernel (NVIDIA/nccl#689); a compute kernel beside it runs on
// the SMs left. Device::comm_share is the share one communication kernel holds; engines
// that share resources (the analytic engine with links shared, SimGrid) share a device's
// SMs by weight: a compute task beside k communication kernels runs at
// (1 - c) / (1 - c + k c) of its speed alone (1 - c with one). Copies to or from host
// memory run on the copy engines and take no SM.
#pragma once

#include <unordered_map>
#include <vector>

#include "sim/task_graph.h"

namespace dejavu::sim {

class SmSharing {
 public:
  SmSharing(const TaskGraph& g, int node_count);
  // Whether a device of the graph gives communication kernels a share of its SMs.
  bool on() const { return on_; }
  // The devices whose SMs communication task `t`'s kernels hold: a collective's participants,
  // both ends of a transfer between GPUs; only devices with a share. Worked out once per
  // participant set or comm set (tasks repeat them), asked at every start and end.
  const std::vector<int>& kernel_devices(const Task& t);
  // A compute task's speed, relative to alone, beside `kernels` communication kernels on a
  // device whose kernels hold `share` of its SMs each.
  static double compute_speed(double share, int kernels);

 private:
  const TaskGraph& g_;
  bool on_ = false;
  std::vector<int> device_of_host_;  // per network node, the device standing for it (-1: none)
  std::unordered_map<int, std::vector<int>> of_participants_, of_comm_set_;  // kernel_devices, once
  const std::vector<int> none_;
};

}  // namespace dejavu::sim
