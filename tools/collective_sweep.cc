#include "tools/collective_sweep.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "sim/collective.h"
#include "sim/csv.h"
#include "sim/error.h"
#include "sim/limits.h"
#include "sim/units.h"

namespace dejavu::tools {

namespace {
constexpr double kMaxRows = 1000;
}

double parse_message_size(const std::string& option, const std::string& text) {
  static const std::pair<char, double> binary[] = {{'K', 1024.0}, {'M', 1048576.0}, {'G', 1073741824.0}};
  const std::string valid =
      "expected nccl-tests' form such as 1M or 8G, or a size such as \"64 MiB\", from 1 B to 1 PB";
  double v = -1;
  for (auto [suffix, factor] : binary)
    if (!text.empty() && text.back() == suffix) {
      double x = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size() - 1, x);
      if (ec == std::errc() && end == text.data() + text.size() - 1) v = x * factor;
    }
  if (v < 0) {
    try {
      v = units::parse_bytes(text);
    } catch (const units::UnitError&) {
      throw ConfigError(SourceLoc{option, 0, 0}, "", "\"" + text.substr(0, 40) + "\": " + valid);
    }
  }
  if (!std::isfinite(v) || v < 1 || v > 1e15)
    throw ConfigError(SourceLoc{option, 0, 0}, "", "\"" + text.substr(0, 40) + "\": " + valid);
  return v;
}

std::vector<SweepRow> run_sweep(const platforms::Cluster& cluster, const SweepOptions& o) {
  if (o.gpus < 2 || o.gpus > cluster.gpu_count())
    throw ConfigError(SourceLoc{"--gpus", 0, 0}, "",
                      std::to_string(o.gpus) + ": platform " + cluster.name + " has " +
                          std::to_string(cluster.gpu_count()) + " GPUs; valid: 2 to " +
                          std::to_string(cluster.gpu_count()));
  if (!(o.min_bytes > 0) || o.max_bytes < o.min_bytes)
    throw ConfigError(SourceLoc{"--max", 0, 0}, "", "below --min; expected min <= max");
  // How many rows, before making any.
  const double rows_wanted = 1 + std::floor(std::log(o.max_bytes / o.min_bytes) / std::log(o.factor) + 1e-9);
  if (!(o.factor > 1) || rows_wanted > kMaxRows)
    throw ConfigError(SourceLoc{"--factor", 0, 0}, "",
                      "the sweep would have " + std::to_string(static_cast<long long>(std::min(rows_wanted, 1e18))) +
                          " rows; at most " + std::to_string(static_cast<int>(kMaxRows)) +
                          " (a larger --factor or a narrower --min/--max)");
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
    const sim::DeviceId d = g.add_device("group", group);
    g.add_collective(g.add_participants({d}), g.stream("comm"), o.op, g.add_comm_set(sim::CommSet{{group}}), S,
                     g.label(sim::to_string(o.op)), -1);
    g.finalize();
    sim::EngineOptions eo = o.engine_options;
    eo.collective_algorithm = o.algorithm;
    SweepRow r;
    r.bytes = S;
    r.time_s = engine->run(g, cluster.network, eo).makespan_s;
    r.algbw_Bps = S / r.time_s;
    r.busbw_Bps = r.algbw_Bps * sim::bus_bandwidth_factor(o.op, o.gpus);
    r.algorithm =
        sim::algorithm_for(*algo, cluster.network, group, o.op).resolve(cluster.network, group, o.op, S).name();
    rows.push_back(r);
  }
  return rows;
}

int attach_measurements(const std::string& path, const std::string& gpu_type, int gpus, std::vector<SweepRow>& rows) {
  const CsvTable table = CsvTable::load_file(path);
  table.expect_columns({"gpu", "gpus", "message_bytes", "busbw_GBps"});
  int joined = 0;
  for (const CsvRow& c : table.rows()) {
    if (c.text("gpu") != gpu_type || c.as_int("gpus", 1, limits::kMaxGpus) != gpus) continue;
    const double busbw = c.as_double("busbw_GBps", 0, 1e6) * 1e9;
    SweepRow* target = nullptr;
    if (c.text("message_bytes") == "large") {
      if (!rows.empty() && rows.back().bytes >= 1073741824.0) target = &rows.back();
    } else {
      const double bytes = c.as_double("message_bytes", 0, 1e18);
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
  const bool measured =
      std::any_of(rows.begin(), rows.end(), [](const SweepRow& r) { return r.measured_busbw_Bps.has_value(); });
  out << "#        size       time(us)  algbw(GB/s)  busbw(GB/s)  algorithm";
  out << (measured ? "          measured(GB/s)  error\n" : "\n");
  for (const auto& r : rows) {
    std::snprintf(buf, sizeof buf, "%14.0f %14.2f %12.2f %12.2f  %-18s", r.bytes, r.time_s * 1e6, r.algbw_Bps / 1e9,
                  r.busbw_Bps / 1e9, r.algorithm.c_str());
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
    std::snprintf(buf, sizeof buf, "%.0f,%.9g,%.6g,%.6g,%s,", r.bytes, r.time_s, r.algbw_Bps / 1e9, r.busbw_Bps / 1e9,
                  r.algorithm.c_str());
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
