// The clusters the lowering tests reason about by hand.
#pragma once

#include "platforms/cluster.h"

namespace dejavu::strategies {

// One server of n A100s whose links are as good as free, or of the given bandwidth, and
// every link (and NIC) of latency `latency_s`.
inline platforms::Cluster free_network(int n, double intra_Bps = 1e300, double latency_s = 0) {
  platforms::Cluster c;
  c.name = "free";
  platforms::ServerGroup g;
  g.count = 1;
  g.gpu = "A100-SXM-80GB";
  g.gpus_per_server = n;
  g.intra.kind = "nvswitch";
  g.intra.bandwidth_Bps = intra_Bps;
  g.intra.latency_s = latency_s;
  g.nic.bandwidth_Bps = 1e300;
  g.nic.latency_s = latency_s;
  c.groups = {g};
  build_network(c);
  return c;
}

}  // namespace dejavu::strategies
