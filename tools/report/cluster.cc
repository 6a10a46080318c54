#include "tools/report/cluster.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "sim/json_text.h"
#include "sim/units.h"

namespace dejavu::report {

namespace {

// "0-3, 6, 8-9"
std::string ranges(std::vector<int> xs) {
  std::sort(xs.begin(), xs.end());
  std::string out;
  for (size_t i = 0; i < xs.size();) {
    size_t j = i;
    while (j + 1 < xs.size() && xs[j + 1] == xs[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(xs[i]) + (j > i ? "-" + std::to_string(xs[j]) : "");
    i = j + 1;
  }
  return out;
}

std::string ratio(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", x);
  return buf;
}

}  // namespace

std::string describe_gpus(const platforms::Cluster& cluster, const std::vector<int>& gpus) {
  std::vector<int> servers, per(static_cast<size_t>(cluster.server_count()), 0);
  for (int g : gpus) ++per[cluster.gpus[g].server];
  for (int g = 0; g < cluster.gpu_count(); ++g)
    if (per[cluster.gpus[g].server] > 0 && std::find(gpus.begin(), gpus.end(), g) == gpus.end())
      return "GPUs " + ranges(gpus);
  for (size_t s = 0; s < per.size(); ++s)
    if (per[s] > 0) servers.push_back(static_cast<int>(s));
  return (servers.size() == 1 ? "server " : "servers ") + ranges(servers);
}

void write_cluster_summary(std::ostream& out, const strategies::cluster::SharedRun& run,
                           const platforms::Cluster& cluster) {
  out << "dejavu: " << run.jobs_name << " on " << run.platform << ", " << run.jobs.size() << " jobs at once ("
      << run.engine << " engine)\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-12s %5s  %-18s %10s %10s %8s %10s %10s %8s\n", "job", "GPUs", "placement",
                "step alone", "together", "slowdown", "comm alone", "together", "slowdown");
  out << line;
  for (const auto& j : run.jobs) {
    std::snprintf(line, sizeof line, "  %-12s %5zu  %-18s %10s %10s %8s %10s %10s %8s\n", j.name.c_str(), j.gpus.size(),
                  describe_gpus(cluster, j.gpus).c_str(), units::format_time(j.alone_s).c_str(),
                  units::format_time(j.together_s).c_str(), ratio(j.slowdown()).c_str(),
                  units::format_time(j.comm_alone_s).c_str(), units::format_time(j.comm_together_s).c_str(),
                  ratio(j.comm_slowdown()).c_str());
    out << line;
  }
  for (const auto& j : run.jobs)
    if (j.capacity_bytes > 0 && j.peak_memory_bytes > j.capacity_bytes)
      out << "  out of memory  " << j.name << ": " << units::format_bytes(j.peak_memory_bytes) << " on a GPU of "
          << units::format_bytes(j.capacity_bytes) << "\n";
  out << "  together for  " << units::format_time(run.window_s)
      << " (until the first job ended its steps; each job's steps in it measured)\n";
  if (run.contested.empty()) out << "  shared links   none: no link carries two jobs' traffic\n";
  for (size_t i = 0; i < run.contested.size(); ++i) {
    out << (i == 0 ? "  shared links   " : "                 ") << run.contested[i].name << ":";
    for (const auto& [job, bytes] : run.contested[i].bytes_per_step)
      out << " " << job << " " << units::format_bytes(bytes);
    out << " a step\n";
  }
}

void write_cluster_json(std::ostream& out, const strategies::cluster::SharedRun& run) {
  nlohmann::ordered_json j = {
      {"jobs_file", run.jobs_name}, {"platform", run.platform}, {"engine", run.engine}, {"window_s", run.window_s}};
  j["jobs"] = nlohmann::ordered_json::array();
  for (const auto& r : run.jobs)
    j["jobs"].push_back({{"name", r.name},
                         {"workload", r.workload},
                         {"plan", r.plan},
                         {"gpus", r.gpus},
                         {"step_alone_s", r.alone_s},
                         {"step_together_s", r.together_s},
                         {"slowdown", r.slowdown()},
                         {"comm_alone_s", r.comm_alone_s},
                         {"comm_together_s", r.comm_together_s},
                         {"comm_slowdown", r.comm_slowdown()},
                         {"steps_run", r.steps_run},
                         {"steps_measured", r.steps_measured},
                         {"peak_memory_bytes", r.peak_memory_bytes},
                         {"capacity_bytes", r.capacity_bytes}});
  j["shared_links"] = nlohmann::ordered_json::array();
  for (const auto& c : run.contested) {
    nlohmann::ordered_json per = nlohmann::ordered_json::object();
    for (const auto& [job, bytes] : c.bytes_per_step) per[job] = bytes;
    j["shared_links"].push_back({{"link", c.name}, {"bytes_per_step", per}});
  }
  out << json_text(j, 2) << "\n";
}

}  // namespace dejavu::report
