#include "strategies/cluster/trace_sources.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "sim/csv.h"
#include "sim/error.h"
#include "sim/limits.h"
#include "sim/random.h"

namespace dejavu::strategies::cluster {

namespace {

struct SizeWeight {
  int gpus;
  double weight;
};
constexpr SizeWeight kSizes[] = {{1, 0.45},  {2, 0.08},   {4, 0.12},   {8, 0.20},   {16, 0.07},
                                 {32, 0.04}, {64, 0.025}, {128, 0.01}, {256, 0.005}};

int draw_size(sim::Rng& rng, int cluster_gpus) {
  double total = 0;
  for (const SizeWeight& s : kSizes)
    if (s.gpus <= cluster_gpus) total += s.weight;
  double u = sim::uniform(rng) * total;
  for (const SizeWeight& s : kSizes) {
    if (s.gpus > cluster_gpus) continue;
    if (u < s.weight) return s.gpus;
    u -= s.weight;
  }
  return 1;
}

constexpr double kMinHours = 2.0 / 60, kMaxHours = 7 * 24;

std::string job_name(const std::string& prefix, size_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%05zu", prefix.c_str(), i);
  return buf;
}

}  // namespace

std::vector<TraceRow> synthetic_trace(const SyntheticSpec& spec) {
  sim::Rng rng(spec.seed);
  std::vector<TraceRow> rows;
  double t = 0, gpu_hours = 0;
  const double mean_gap = spec.days * 86400 / spec.jobs;
  for (int i = 0; i < spec.jobs; ++i) {
    TraceRow r;
    r.name = job_name("j", static_cast<size_t>(i));
    r.submit_s = t;
    r.gpus = draw_size(rng, spec.cluster_gpus);
    r.hours = std::clamp(0.75 * std::exp(1.6 * sim::gaussian(rng)), kMinHours, kMaxHours);
    gpu_hours += r.gpus * r.hours;
    rows.push_back(r);
    t += -std::log(1 - sim::uniform(rng)) * mean_gap;
  }
  // The scale that gives the load once every length is clamped: the clamped total grows
  // with it, so bisect (on its logarithm) where it meets the target.
  const double target = spec.load * spec.cluster_gpus * spec.days * 24;
  const auto total = [&](double scale) {
    double sum = 0;
    for (const TraceRow& r : rows) sum += r.gpus * std::clamp(r.hours * scale, kMinHours, kMaxHours);
    return sum;
  };
  double lo = std::log(target / gpu_hours) - 30, hi = lo + 60;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (total(std::exp(mid)) < target ? lo : hi) = mid;
  }
  for (TraceRow& r : rows) r.hours = std::clamp(r.hours * std::exp(hi), kMinHours, kMaxHours);
  return rows;
}

namespace {

double seconds_of(const CsvRow& row, const std::string& column) {
  std::tm tm{};
  std::istringstream in(row.text(column));
  in >> std::get_time(&tm, "%Y-%m-%d %H:%M:%S");
  if (in.fail()) row.fail(column, "expected a time as YYYY-MM-DD HH:MM:SS, got \"" + row.text(column) + "\"");
  return static_cast<double>(timegm(&tm));
}

}  // namespace

std::vector<TraceRow> helios_trace(const std::string& path, const HeliosSpec& spec) {
  const CsvTable table = CsvTable::load_file(path);
  table.expect_columns({"job_id", "gpu_num", "submit_time", "duration"});
  std::vector<TraceRow> rows;
  double first = -1;
  for (const CsvRow& row : table.rows()) {
    const auto gpus = static_cast<int>(row.as_int("gpu_num", 0, limits::kMaxGpus));
    const double duration = row.as_double("duration", 0, limits::kMaxTime);
    if (gpus < 1 || duration <= 0 || gpus > spec.max_gpus) continue;
    const double submit = seconds_of(row, "submit_time");
    if (first < 0) first = submit;
    if (submit < first) row.fail("submit_time", "before the first job's; Helios logs are in submission order");
    if (submit - first > spec.days * 86400) break;
    rows.push_back({"h" + row.text("job_id"), submit - first, gpus, duration / 3600});
    if (static_cast<int>(rows.size()) >= spec.max_jobs) break;
  }
  if (rows.empty())
    throw ConfigError(SourceLoc{path, table.header_line(), 1}, "", "no GPU job (gpu_num >= 1, duration > 0) to keep");
  return rows;
}

void write_trace_csv(std::ostream& out, const std::vector<TraceRow>& rows, const JobMix& mix,
                     const std::string& out_dir) {
  out << "name,submit_s,gpus,workload,tp,pp,micro_batch,global_batch,recompute,sequence_parallel,zero,hours\n";
  const std::filesystem::path dir = std::filesystem::absolute(out_dir.empty() ? "." : out_dir);
  for (const TraceRow& r : rows) {
    const MixRule* rule = mix.rule_for(r.gpus);
    if (!rule)
      throw ConfigError(SourceLoc{mix.file, 0, 0}, "rules",
                        "no rule holds a job of " + std::to_string(r.gpus) + " GPUs (" + r.name +
                            "); valid: a rule whose gpus range (and multiple_of, tp x pp) holds it");
    const int dp = r.gpus / (rule->tp * rule->pp);
    const std::string workload =
        std::filesystem::absolute(rule->workload).lexically_normal().lexically_relative(dir).string();
    char tail[128];
    std::snprintf(tail, sizeof tail, ",%s,%s,%d,%.6g\n", rule->recompute.c_str(),
                  rule->sequence_parallel ? "true" : "false", rule->zero, r.hours);
    out << r.name << "," << std::setprecision(10) << r.submit_s << "," << r.gpus << "," << workload << "," << rule->tp
        << "," << rule->pp << "," << rule->micro_batch << ","
        << static_cast<long long>(dp) * rule->micro_batch * rule->microbatches << tail;
  }
}

}  // namespace dejavu::strategies::cluster
