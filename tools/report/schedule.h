// What `dejavu cluster --trace` prints and writes: per placement policy, the trace's job
// completion times, queueing delays, slowdowns and interference as distributions, the
// cluster's utilisation and goodput; JSON with every job; an HTML page with their CDFs.
#pragma once

#include <ostream>
#include <vector>

#include "strategies/cluster/scheduler.h"

namespace dejavu::report {

// The q-quantile (0..1) of xs by linear interpolation between order statistics.
double quantile(std::vector<double> xs, double q);

void write_schedule_summary(std::ostream& out, const std::vector<strategies::cluster::ScheduleResult>& runs);
void write_schedule_json(std::ostream& out, const std::vector<strategies::cluster::ScheduleResult>& runs);
void write_schedule_html(std::ostream& out, const std::vector<strategies::cluster::ScheduleResult>& runs);

}  // namespace dejavu::report
