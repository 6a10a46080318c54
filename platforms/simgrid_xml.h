// Writes a cluster as a SimGrid platform file (XML, version 4.1), so users can run
// SimGrid's own tools on it: every GPU a host (speed 1 Gf, as the SimGrid engine uses), every
// link a SPLITDUPLEX link with its YAML bandwidth and latency, routed exactly as dejavu does.
//
// Fat-trees and leaf-spines (whose builder declares how hosts nest, sim::Hierarchy) are
// written as zones, so the file grows with GPUs (times GPUs per leaf switch):
//
//   root (Full): pods, and between two pods the route through a FATPIPE link "spine" that
//     stands for the non-blocking spine switch (it carries the sum of all uplinks: no flow
//     is ever slowed there);
//   pod (Full): about (2L)^(1/3) leaf zones of the L leaves and an "up" zone whose router is
//     the pod's way to the spine; routes between leaves are their two uplinks;
//   leaf (Full): its GPUs, a gateway router standing for the leaf switch, the links inside,
//     every route between two of its GPUs and each GPU's way to the gateway.
//
// A route between leaves climbs the switch tree, the only way there is; SimGrid's routes are
// dejavu's with the spine link added between pods. Rail-optimized clusters (a server's GPUs
// on different rails, joined by NVLink) have no such nesting and are written as one Full
// zone with a route per GPU pair, up to kMaxFlatExportGpus GPUs.
#pragma once

#include <ostream>

#include "platforms/cluster.h"

namespace dejavu::platforms {

constexpr int kMaxFlatExportGpus = 256;

struct ExportSummary {
  long long hosts = 0, links = 0, routes = 0, zones = 0;
};

// Throws ModelError when a cluster without nesting has more than kMaxFlatExportGpus GPUs.
ExportSummary write_simgrid_platform(std::ostream& out, const Cluster& cluster);

}  // namespace dejavu::platforms
