// What `dejavu cluster` prints and writes for jobs run together: per job its step alone
// and beside the others, the slowdowns, and the links they share.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "strategies/cluster/shared_run.h"

namespace dejavu::report {

// "servers 0-3, 6" when the GPUs are whole servers, else "GPUs 0-5, 8-9".
std::string describe_gpus(const platforms::Cluster& cluster, const std::vector<int>& gpus);

void write_cluster_summary(std::ostream& out, const strategies::cluster::SharedRun& run,
                           const platforms::Cluster& cluster);
void write_cluster_json(std::ostream& out, const strategies::cluster::SharedRun& run);

}  // namespace dejavu::report
