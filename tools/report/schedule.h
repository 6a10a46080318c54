// What `dejavu cluster --trace` prints and writes: per placement policy, the trace's job
// completion times, queueing delays, slowdowns and interference as distributions, the
// cluster's utilisation and goodput; JSON with every job; an HTML page with their CDFs.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "strategies/cluster/scheduler.h"

namespace dejavu::report {

// The q-quantile (0..1) of xs by linear interpolation between order statistics.
double quantile(std::vector<double> xs, double q);

void write_schedule_summary(std::ostream& out, const std::vector<strategies::cluster::ScheduleResult>& runs);
void write_schedule_json(std::ostream& out, const std::vector<strategies::cluster::ScheduleResult>& runs);
void write_schedule_html(std::ostream& out, const std::vector<strategies::cluster::ScheduleResult>& runs);

// `cluster --results DIR`: a policy's run with the inputs it came from, as JSON, and back;
// reading throws a ConfigError naming `file` for text that is not such a run or came from
// other `inputs`.
void write_schedule_result(std::ostream& out, const strategies::cluster::ScheduleResult& run,
                           const std::string& inputs);
strategies::cluster::ScheduleResult read_schedule_result(const std::string& text, const std::string& file,
                                                         const std::string& inputs);

}  // namespace dejavu::report
