// Faults as the engines see them: per host a speed factor over time windows (a straggler),
// per link a bandwidth factor over windows (degraded; 0 is down), per host a fail-stop
// time. Built from a scenario YAML by strategies/faults.h; the engines apply them (the
// SimGrid engine as host and link profiles, the analytic engine by integrating speeds).
#pragma once

#include <limits>
#include <map>
#include <string>
#include <vector>

namespace dejavu::sim {

struct Window {
  double from_s = 0;
  double to_s = std::numeric_limits<double>::infinity();
  double factor = 1;
};

struct Faults {
  std::map<int, std::vector<Window>> host_speed;      // host node -> windows (factor of its speed)
  std::map<int, std::vector<Window>> link_bandwidth;  // link id -> windows (factor; 0: down)
  std::map<int, double> host_fail_s;                  // host node -> when it stops for good

  bool empty() const { return host_speed.empty() && link_bandwidth.empty() && host_fail_s.empty(); }
  // The factor in force at time t: the product of the windows covering it.
  static double factor_at(const std::vector<Window>& windows, double t);
  // When `work_s` seconds of full-speed work started at t0 finish on hosts running in
  // lockstep (the slowest sets the pace), integrating the windows.
  double finish_s(const std::vector<int>& hosts, double t0, double work_s) const;
  // When a transfer of `work_s` seconds at full bandwidth, started at t0 over `links`,
  // finishes, its rate following their lowest factor from moment to moment (a window
  // that opens mid-transfer slows the rest of it); or, if a link goes down first, when.
  struct Transfer {
    double finish_s = 0;
    bool failed = false;  // a link went down at finish_s
  };
  Transfer transfer_s(const std::vector<int>& links, double t0, double work_s) const;
  // Times at which some factor changes, ascending (window edges).
  std::vector<double> edges() const;
};

}  // namespace dejavu::sim
