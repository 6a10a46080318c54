#include "tools/report/schedule.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>
#include <nlohmann/json.hpp>

#include "sim/error.h"
#include "sim/json_text.h"
#include "sim/units.h"
#include "tools/report/svg.h"

namespace dejavu::report {

using strategies::cluster::JobOutcome;
using strategies::cluster::ScheduleResult;

double quantile(std::vector<double> xs, double q) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  const double at = q * static_cast<double>(xs.size() - 1);
  const auto lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (at - static_cast<double>(lo)) * (xs[hi] - xs[lo]);
}

namespace {

std::vector<double> of(const ScheduleResult& r, const std::function<double(const JobOutcome&)>& f) {
  std::vector<double> out;
  for (const JobOutcome& j : r.jobs)
    if (j.end_s >= 0) out.push_back(f(j));
  return out;
}

double mean(const std::vector<double>& xs) {
  double s = 0;
  for (double x : xs) s += x;
  return xs.empty() ? 0 : s / static_cast<double>(xs.size());
}

std::string fixed(double x, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

nlohmann::ordered_json distribution(const std::vector<double>& xs) {
  return {{"mean", mean(xs)},
          {"p50", quantile(xs, 0.5)},
          {"p90", quantile(xs, 0.9)},
          {"p99", quantile(xs, 0.99)},
          {"max", xs.empty() ? 0 : *std::max_element(xs.begin(), xs.end())}};
}

}  // namespace

void write_schedule_summary(std::ostream& out, const std::vector<ScheduleResult>& runs) {
  const ScheduleResult& first = runs.front();
  out << "dejavu: trace " << first.trace << " on " << first.platform << " (" << first.gpus << " GPUs), "
      << first.jobs.size() << " jobs (" << first.engine << " engine)\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-15s %10s %10s %10s %10s %9s %9s %8s %8s %8s %8s\n", "policy", "makespan",
                "JCT mean", "JCT p90", "queue mean", "slow p90", "placem.", "interf.", "util.", "goodput", "failures");
  out << line;
  for (const ScheduleResult& r : runs) {
    const auto jct = of(r, [](const JobOutcome& j) { return j.jct_s(); });
    const auto queue = of(r, [](const JobOutcome& j) { return j.queue_s(); });
    const auto slow = of(r, [](const JobOutcome& j) { return j.slowdown(); });
    const auto interference = of(r, [](const JobOutcome& j) { return j.interference; });
    const auto placement = of(r, [](const JobOutcome& j) { return j.placement(); });
    std::snprintf(line, sizeof line, "  %-15s %10s %10s %10s %10s %9s %9s %8s %8s %8s %8d\n", r.policy.c_str(),
                  units::format_time(r.makespan_s).c_str(), units::format_time(mean(jct)).c_str(),
                  units::format_time(quantile(jct, 0.9)).c_str(), units::format_time(mean(queue)).c_str(),
                  fixed(quantile(slow, 0.9), "%.2fx").c_str(), fixed(mean(placement), "%.3fx").c_str(),
                  fixed(mean(interference), "%.3fx").c_str(), fixed(100 * r.utilisation, "%.1f%%").c_str(),
                  fixed(100 * r.goodput, "%.1f%%").c_str(), r.failures);
    out << line;
  }
  out << "  (means over jobs. slow: completion time over its ideal run, never queued, alone, packed; placem.:\n"
         "   its step alone on the GPUs it got over packed; interf.: its mean step over its step alone there,\n"
         "   from co-runners' traffic; goodput: GPU time its steps take packed over GPU time held)\n";
  for (const ScheduleResult& r : runs)
    out << "  " << r.policy << ": " << r.alone_runs << " jobs' steps simulated alone, " << r.shared_runs
        << " sets of co-running jobs together, " << r.events << " events\n";
}

namespace {

nlohmann::ordered_json run_json(const ScheduleResult& r) {
  nlohmann::ordered_json j = {{"policy", r.policy},
                              {"trace", r.trace},
                              {"platform", r.platform},
                              {"engine", r.engine},
                              {"gpus", r.gpus},
                              {"makespan_s", r.makespan_s},
                              {"utilisation", r.utilisation},
                              {"goodput", r.goodput},
                              {"failures", r.failures},
                              {"shared_runs", r.shared_runs},
                              {"alone_runs", r.alone_runs},
                              {"events", r.events}};
  j["jct_s"] = distribution(of(r, [](const JobOutcome& x) { return x.jct_s(); }));
  j["queue_s"] = distribution(of(r, [](const JobOutcome& x) { return x.queue_s(); }));
  j["slowdown"] = distribution(of(r, [](const JobOutcome& x) { return x.slowdown(); }));
  j["interference"] = distribution(of(r, [](const JobOutcome& x) { return x.interference; }));
  j["placement"] = distribution(of(r, [](const JobOutcome& x) { return x.placement(); }));
  j["jobs"] = nlohmann::ordered_json::array();
  for (const JobOutcome& x : r.jobs)
    j["jobs"].push_back({{"name", x.name},
                         {"plan", x.plan},
                         {"gpus", x.gpus},
                         {"submit_s", x.submit_s},
                         {"start_s", x.start_s},
                         {"end_s", x.end_s},
                         {"iterations", x.iterations},
                         {"step_alone_s", x.alone_step_s},
                         {"step_ideal_s", x.ideal_step_s},
                         {"interference", x.interference},
                         {"failures", x.failures},
                         {"lost_s", x.lost_s},
                         {"gpu_s_held", x.held_gpu_s}});
  return j;
}

}  // namespace

void write_schedule_json(std::ostream& out, const std::vector<ScheduleResult>& runs) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const ScheduleResult& r : runs) all.push_back(run_json(r));
  out << json_text(all, 2) << "\n";
}

namespace {

ScheduleResult run_from_json(const nlohmann::json& j) {
  ScheduleResult r;
  r.policy = j.at("policy");
  r.trace = j.at("trace");
  r.platform = j.at("platform");
  r.engine = j.at("engine");
  r.gpus = j.at("gpus");
  r.makespan_s = j.at("makespan_s");
  r.utilisation = j.at("utilisation");
  r.goodput = j.at("goodput");
  r.failures = j.at("failures");
  r.shared_runs = j.at("shared_runs");
  r.alone_runs = j.at("alone_runs");
  r.events = j.at("events");
  for (const auto& x : j.at("jobs")) {
    JobOutcome o;
    o.name = x.at("name");
    o.plan = x.at("plan");
    o.gpus = x.at("gpus");
    o.submit_s = x.at("submit_s");
    o.start_s = x.at("start_s");
    o.end_s = x.at("end_s");
    o.iterations = x.at("iterations");
    o.alone_step_s = x.at("step_alone_s");
    o.ideal_step_s = x.at("step_ideal_s");
    o.interference = x.at("interference");
    o.failures = x.at("failures");
    o.lost_s = x.at("lost_s");
    o.held_gpu_s = x.at("gpu_s_held");
    r.jobs.push_back(o);
  }
  return r;
}

}  // namespace

ScheduleResult read_schedule_result(const std::string& text, const std::string& file, const std::string& inputs) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (j.at("inputs") != inputs)
      throw ConfigError(SourceLoc{file, 0, 0}, "inputs",
                        "a run of other inputs (" + j.at("inputs").get<std::string>() +
                            "); remove it or keep this run's in another --results folder");
    return run_from_json(j.at("run"));
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(SourceLoc{file, 0, 0}, "", std::string("not a kept run: ") + e.what() + "; remove it");
  }
}

void write_schedule_result(std::ostream& out, const ScheduleResult& run, const std::string& inputs) {
  nlohmann::ordered_json j = {{"inputs", inputs}, {"run", run_json(run)}};
  out << json_text(j, 2) << "\n";
}

namespace {

// The empirical CDF of each policy's values, x on a log scale.
std::string cdf_svg(const std::vector<ScheduleResult>& runs, const std::string& title,
                    const std::function<double(const JobOutcome&)>& f) {
  const double W = 640, H = 320, left = 60, right = 140, top = 30, bottom = 40;
  double lo = 1e300, hi = 0;
  for (const ScheduleResult& r : runs)
    for (double x : of(r, f)) {
      lo = std::min(lo, std::max(x, 1e-3));
      hi = std::max(hi, std::max(x, 1e-3));
    }
  if (hi <= lo) hi = lo * 10;
  const double l0 = std::log10(lo), l1 = std::log10(hi);
  Svg svg(W, H);
  svg.text(left, 18, title);
  svg.line(left, H - bottom, W - right, H - bottom, "#999").line(left, top, left, H - bottom, "#999");
  for (double p : {0.0, 0.5, 1.0})
    svg.text(left - 6, H - bottom - p * (H - top - bottom) + 4, number(p), "text-anchor=\"end\"");
  svg.text(left, H - 12, units::format_time(lo)).text(W - right, H - 12, units::format_time(hi), "text-anchor=\"end\"");
  for (size_t i = 0; i < runs.size(); ++i) {
    std::vector<double> xs = of(runs[i], f);
    std::sort(xs.begin(), xs.end());
    std::vector<std::pair<double, double>> pts;
    for (size_t k = 0; k < xs.size(); ++k) {
      const double x = left + (std::log10(std::max(xs[k], 1e-3)) - l0) / (l1 - l0) * (W - left - right);
      pts.emplace_back(x, H - bottom - static_cast<double>(k + 1) / xs.size() * (H - top - bottom));
    }
    svg.polyline(pts, series_colour(i));
    svg.text(W - right + 10, top + 16 * (i + 1), runs[i].policy, "fill=\"" + series_colour(i) + "\"");
  }
  return svg.str();
}

}  // namespace

void write_schedule_html(std::ostream& out, const std::vector<ScheduleResult>& runs) {
  const ScheduleResult& first = runs.front();
  out << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>dejavu cluster: " << escape(first.trace)
      << "</title></head>\n<body style=\"font-family: sans-serif\">\n<h1>" << escape(first.trace) << " on "
      << escape(first.platform) << "</h1>\n<p>" << first.jobs.size() << " jobs, " << first.gpus
      << " GPUs, placement policies compared. Each curve: the share of jobs at or below a value.</p>\n";
  out << "<pre>";
  std::ostringstream table;
  write_schedule_summary(table, runs);
  out << escape(table.str()) << "</pre>\n";
  out << cdf_svg(runs, "job completion time (CDF)", [](const JobOutcome& j) { return j.jct_s(); });
  out << cdf_svg(runs, "queueing delay (CDF)", [](const JobOutcome& j) { return j.queue_s(); });
  out << "</body></html>\n";
}

}  // namespace dejavu::report
