// Writes a cluster as a SimGrid platform file (XML, version 4.1), so users can run
// SimGrid's own tools on it: one Full zone with every GPU as a host (speed 1 Gf, as the
// SimGrid engine uses), every link as a SPLITDUPLEX link with its YAML bandwidth and
// latency, and one explicit route per ordered pair of GPUs, exactly the route dejavu uses.
// A Full zone lists n(n-1) routes, so export stops at kMaxExportGpus GPUs.
#pragma once

#include <ostream>

#include "platforms/cluster.h"

namespace dejavu::platforms {

constexpr int kMaxExportGpus = 256;

// Throws ModelError when the cluster has more than kMaxExportGpus GPUs.
void write_simgrid_platform(std::ostream& out, const Cluster& cluster);

}  // namespace dejavu::platforms
