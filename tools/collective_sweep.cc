#include "tools/collective_sweep.h"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "sim/collective.h"
#include "sim/error.h"
#include "sim/units.h"

namespace dejavu::tools {

double parse_message_size(const std::string& text) {
  static const std::pair<char, double> binary[] = {{'K', 1024.0}, {'M', 1048576.0}, {'G', 1073741824.0}};
  if (!text.empty()) {
    for (auto [suffix, factor] : binary) {
      if (text.back() != suffix) continue;
      try {
        size_t used = 0;
        const double v = std::stod(text.substr(0, text.size() - 1), &used);
        if (used == text.size() - 1 && v >= 0) return v * factor;
      } catch (const std::exception&) {
      }
    }
  }
  try {
    return units::parse_bytes(text);
  } catch (const units::UnitError&) {
    throw Error("message size \"" + text + "\": expected nccl-tests' form such as 1M or 8G, or a size such as \"64 MiB\"");
  }
}

std::vector<SweepRow> run_sweep(const platforms::Cluster& cluster, const SweepOptions& o) {
  if (o.gpus < 2 || o.gpus > cluster.gpu_count())
    throw Error("--gpus " + std::to_string(o.gpus) + ": platform " + cluster.name + " has " +
                std::to_string(cluster.gpu_count()) + " GPUs; valid: 2 to " + std::to_string(cluster.gpu_count()));
  if (!(o.min_bytes > 0) || o.max_bytes < o.min_bytes || !(o.factor > 1))
    throw Error("sizes: expected 0 < min <= max and a factor above 1");
  std::vector<int> group;
  for (int i = 0; i < o.gpus; ++i) group.push_back(cluster.gpus[i].host);
  const auto algo = sim::collective_algorithms().make(o.algorithm);
  if (!algo->supports(cluster.network, group, o.op))
    throw Error("collective algorithm " + o.algorithm + " cannot run " + sim::to_string(o.op) + " over " +
                std::to_string(o.gpus) + " GPUs of " + cluster.name + "; try --algo auto");
  const auto engine = sim::engines().make(o.engine);
  std::vector<SweepRow> rows;
  for (double S = o.min_bytes; S <= o.max_bytes * (1 + 1e-12); S *= o.factor) {
    sim::TaskGraph g;
    const int d = g.add_device("group", group);
    g.add_collective(g.add_participants({d}), g.stream("comm"), o.op, g.add_comm_set(sim::CommSet{{group}}),
                     S, g.label(sim::to_string(o.op)), -1);
    g.finalize();
    sim::EngineOptions eo = o.engine_options;
    eo.collective_algorithm = o.algorithm;
    SweepRow r;
    r.bytes = S;
    r.time_s = engine->run(g, cluster.network, eo).makespan_s;
    r.algbw_Bps = S / r.time_s;
    r.busbw_Bps = r.algbw_Bps * sim::bus_bandwidth_factor(o.op, o.gpus);
    r.algorithm = algo->resolve(cluster.network, group, o.op, S).name();
    rows.push_back(r);
  }
  return rows;
}

int attach_measurements(const std::string& path, const std::string& gpu_type, int gpus,
                        std::vector<SweepRow>& rows) {
  std::ifstream in(path);
  if (!in) throw ConfigError(SourceLoc{path, 0, 0}, "", "cannot open the file");
  std::string line;
  int line_no = 0, joined = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no == 1 || line.empty()) continue;  // header
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (f.size() < 6 && std::getline(ss, cell, ',')) f.push_back(cell);
    if (f.size() < 6)
      throw ConfigError(SourceLoc{path, line_no, 1}, "",
                        "expected gpu,gpus,servers,interconnect,message_bytes,busbw_GBps,source");
    if (f[0] != gpu_type || f[1] != std::to_string(gpus)) continue;
    double busbw = 0;
    try {
      busbw = std::stod(f[5]) * 1e9;
    } catch (const std::exception&) {
      throw ConfigError(SourceLoc{path, line_no, 1}, "busbw_GBps", "expected a number, got \"" + f[5] + "\"");
    }
    SweepRow* target = nullptr;
    if (f[4] == "large") {
      if (!rows.empty() && rows.back().bytes >= 1073741824.0) target = &rows.back();
    } else {
      double bytes = 0;
      try {
        bytes = std::stod(f[4]);
      } catch (const std::exception&) {
        throw ConfigError(SourceLoc{path, line_no, 1}, "message_bytes", "expected bytes or \"large\", got \"" + f[4] + "\"");
      }
      for (auto& r : rows)
        if (std::fabs(r.bytes - bytes) < 0.5) target = &r;
    }
    if (target) {
      target->measured_busbw_Bps = busbw;
      ++joined;
    }
  }
  return joined;
}

void write_sweep_table(std::ostream& out, const std::vector<SweepRow>& rows) {
  char buf[200];
  const bool measured = std::any_of(rows.begin(), rows.end(), [](const SweepRow& r) { return r.measured_busbw_Bps.has_value(); });
  out << "#        size       time(us)  algbw(GB/s)  busbw(GB/s)  algorithm";
  out << (measured ? "          measured(GB/s)  error\n" : "\n");
  for (const auto& r : rows) {
    std::snprintf(buf, sizeof buf, "%14.0f %14.2f %12.2f %12.2f  %-18s", r.bytes, r.time_s * 1e6,
                  r.algbw_Bps / 1e9, r.busbw_Bps / 1e9, r.algorithm.c_str());
    out << buf;
    if (r.measured_busbw_Bps) {
      std::snprintf(buf, sizeof buf, " %14.2f  %+6.1f%%", *r.measured_busbw_Bps / 1e9, 100 * r.error());
      out << buf;
    }
    out << "\n";
  }
}

void write_sweep_csv(std::ostream& out, const std::vector<SweepRow>& rows) {
  out << "size_bytes,time_s,algbw_GBps,busbw_GBps,algorithm,measured_busbw_GBps,error\n";
  char buf[200];
  for (const auto& r : rows) {
    std::snprintf(buf, sizeof buf, "%.0f,%.9g,%.6g,%.6g,%s,", r.bytes, r.time_s, r.algbw_Bps / 1e9,
                  r.busbw_Bps / 1e9, r.algorithm.c_str());
    out << buf;
    if (r.measured_busbw_Bps) {
      std::snprintf(buf, sizeof buf, "%.6g,%.6g", *r.measured_busbw_Bps / 1e9, r.error());
      out << buf;
    } else {
      out << ",";
    }
    out << "\n";
  }
}

}  // namespace dejavu::tools
