#include "tools/report/training.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "sim/json_text.h"
#include "sim/units.h"
#include "tools/report/svg.h"

namespace dejavu::report {

using namespace strategies;

namespace {
std::string shown(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}
}  // namespace

void write_curves_csv(std::ostream& out, const std::vector<strategies::ConvergenceResult>& results) {
  out << "strategy,time_s,step,loss,accuracy,consensus\n";
  char buf[160];
  for (const auto& r : results)
    for (const auto& p : r.curve) {
      std::snprintf(buf, sizeof buf, "%s,%.9g,%ld,%.9g,%.6g,%.6g\n", r.name.c_str(), p.time_s, p.step, p.loss,
                    p.accuracy, p.consensus);
      out << buf;
    }
}

// Two panels: loss against simulated wall-clock time, and against steps, each series in
// its colour, the target dashed.
void write_curves_svg(std::ostream& out, const std::vector<strategies::ConvergenceResult>& results, double target) {
  double tmax = 0, smax = 0, lmax = 0;
  for (const auto& r : results)
    for (const auto& p : r.curve)
      tmax = std::max(tmax, p.time_s), smax = std::max(smax, static_cast<double>(p.step)),
      lmax = std::max(lmax, p.loss);
  tmax = tmax > 0 ? tmax : 1, smax = smax > 0 ? smax : 1, lmax = lmax > 0 ? lmax : 1;
  const double panel = 400, L = 60, R = 700;
  Svg svg(720, 2 * panel + 20, 12, "", true);
  auto draw = [&](double top, const std::string& title, double xmax, const std::string& unit, auto x_of) {
    const double T = top + 40, B = top + 370;
    auto X = [&](double v) { return L + (R - L) * v / xmax; };
    auto Y = [&](double l) { return B - (B - T) * std::min(l, lmax) / lmax; };
    char range[64];
    std::snprintf(range, sizeof range, "%.4g%s", xmax, unit.c_str());
    svg.text(10, top + 20, title, "font-size=\"14\"").line(L, B, R, B, "black").line(L, B, L, T, "black");
    svg.line(L, Y(target), R, Y(target), "#999", true)
        .text(R - 80, Y(target) - 4, "target " + shown(target), "fill=\"#666\"");
    svg.text(L, B + 16, "0")
        .text(R, B + 16, range, "text-anchor=\"end\"")
        .text(L - 4, T + 4, shown(lmax), "text-anchor=\"end\"");
    for (size_t i = 0; i < results.size(); ++i) {
      std::vector<std::pair<double, double>> pts;
      for (const auto& p : results[i].curve) pts.push_back({X(x_of(p)), Y(p.loss)});
      svg.polyline(pts, series_colour(i))
          .text(R - 220, T + 16 + 16 * i, results[i].name, "fill=\"" + series_colour(i) + "\"");
    }
  };
  draw(0, "validation loss against simulated wall-clock time", tmax, " s",
       [](const strategies::CurvePoint& p) { return p.time_s; });
  draw(panel, "validation loss against steps", smax, " steps",
       [](const strategies::CurvePoint& p) { return static_cast<double>(p.step); });
  out << svg.str();
}

void write_horizon_summary(std::ostream& out, const strategies::HorizonResult& r) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "run-horizon: %ld iterations, policy %s\n"
                "  time to train      %s (fault-free %s)\n"
                "  goodput            %.2f%% (closed form at this interval: %.2f%%)\n"
                "  failures           %d (rate %.3g per hour)%s\n"
                "  lost work          %s; downtime %s; checkpoints %s\n"
                "  checkpoint         %s to write; every %s (best %s; Young sqrt(2C/L) %s)\n",
                r.iterations, r.policy.c_str(), units::format_time(r.wall_s).c_str(),
                units::format_time(r.fault_free_s).c_str(), 100 * r.goodput, 100 * r.expected_goodput, r.failures,
                r.failure_rate_per_s * 3600,
                r.spares_used    ? (", " + std::to_string(r.spares_used) + " hot spares used").c_str()
                : r.servers_lost ? (", " + std::to_string(r.servers_lost) + " servers lost").c_str()
                                 : "",
                units::format_time(r.lost_work_s).c_str(), units::format_time(r.downtime_s).c_str(),
                units::format_time(r.checkpoint_overhead_s).c_str(), units::format_time(r.checkpoint_s).c_str(),
                units::format_time(r.interval_s).c_str(), units::format_time(r.best_interval_s).c_str(),
                units::format_time(r.young_interval_s).c_str());
  out << buf;
  if (!r.stopped.empty())
    out << "  stopped            " << r.stopped << " (" << r.iterations_done << " iterations done)\n";
  for (const ByzantineWorker& w : r.byzantine)
    out << "  byzantine          GPU " << w.gpu << " (" << w.mode << "), recorded for the convergence model\n";
}

void write_horizon_json(std::ostream& out, const strategies::HorizonResult& r) {
  nlohmann::ordered_json j = {{"policy", r.policy},
                              {"iterations", r.iterations},
                              {"iterations_done", r.iterations_done},
                              {"time_to_train_s", r.wall_s},
                              {"fault_free_s", r.fault_free_s},
                              {"goodput", r.goodput},
                              {"expected_goodput", r.expected_goodput},
                              {"failures", r.failures},
                              {"failure_rate_per_s", r.failure_rate_per_s},
                              {"lost_work_s", r.lost_work_s},
                              {"downtime_s", r.downtime_s},
                              {"checkpoint_overhead_s", r.checkpoint_overhead_s},
                              {"checkpoint_s", r.checkpoint_s},
                              {"checkpoint_interval_s", r.interval_s},
                              {"best_checkpoint_interval_s", r.best_interval_s},
                              {"young_interval_s", r.young_interval_s},
                              {"spares_used", r.spares_used},
                              {"servers_lost", r.servers_lost},
                              {"stopped", r.stopped}};
  j["byzantine"] = nlohmann::ordered_json::array();
  for (const ByzantineWorker& w : r.byzantine)
    j["byzantine"].push_back({{"gpu", w.gpu}, {"mode", w.mode}, {"factor", w.factor}});
  out << json_text(j, 2) << "\n";
}

}  // namespace dejavu::report
