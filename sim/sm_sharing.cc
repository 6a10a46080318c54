#include "sim/sm_sharing.h"

namespace dejavu::sim {

SmSharing::SmSharing(const TaskGraph& g, int node_count) : g_(g) {
  for (const Device& dev : g.devices()) on_ = on_ || dev.comm_share > 0;
  if (!on_) return;
  device_of_host_.assign(static_cast<size_t>(node_count), -1);
  for (size_t d = 0; d < g.devices().size(); ++d)
    for (int h : g.devices()[d].hosts) device_of_host_[h] = static_cast<int>(d);
}

const std::vector<int>& SmSharing::kernel_devices(const Task& t) {
  if (!on_ || t.kind == TaskKind::Compute) return none_;
  const bool collective = t.kind == TaskKind::Collective;
  auto [it, fresh] =
      (collective ? of_participants_ : of_comm_set_).try_emplace(collective ? t.participants : t.comm_set);
  std::vector<int>& out = it->second;
  if (!fresh) return out;
  const auto add = [&](int d) {
    if (d >= 0 && g_.devices()[d].comm_share > 0) out.push_back(d);
  };
  if (collective) {
    for (int d : g_.participants(t.participants)) add(d);
    return out;
  }
  const std::vector<int>& ends = g_.comm_set(t.comm_set).groups.at(0);
  const int a = device_of_host_[ends.at(0)], b = device_of_host_[ends.at(1)];
  if (a < 0 || b < 0) return out;  // host memory at one end: the copy engines
  add(a);
  if (b != a) add(b);
  return out;
}

double SmSharing::compute_speed(double share, int kernels) {
  if (kernels <= 0 || share <= 0) return 1.0;
  return (1 - share) / (1 - share + kernels * share);
}

}  // namespace dejavu::sim
