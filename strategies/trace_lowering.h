// A Chakra execution trace (one file per rank) turned into a TaskGraph on a cluster: rank r
// runs on GPU r. Compute nodes keep their recorded duration (or a roofline estimate from
// num_ops and tensor_size); the k-th collective of a process group on every rank becomes
// one collective over those ranks; the k-th send from a to b with a tag meets b's k-th
// receive from a with that tag as one transfer; other nodes keep only their dependencies.
#pragma once

#include "platforms/cluster.h"
#include "strategies/lowering.h"
#include "workloads/chakra/chakra_trace.h"

namespace dejavu::strategies {

// Throws ConfigError for a cluster of another size or a send with no receive, and
// ModelError naming a node in a dependency cycle.
LoweredJob lower_trace(const workloads::ChakraTrace& trace, const platforms::Cluster& cluster);

}  // namespace dejavu::strategies
