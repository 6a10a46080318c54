#include "tools/report/html.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "sim/memory.h"
#include "sim/units.h"
#include "tools/report/iteration.h"
#include "tools/report/svg.h"

namespace dejavu::report {

namespace {

std::string fmt(const char* f, double a, double b = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

const char* colour_of(const std::string& stream) {
  if (stream == "compute") return "#4e79a7";
  if (stream == "tp-comm") return "#f28e2b";
  if (stream == "pp-comm") return "#59a14f";
  if (stream == "dp-comm") return "#e15759";
  if (stream == "ep-comm") return "#b07aa1";
  return "#9c755f";
}

// Rows (device, stream) with their busy intervals, neighbours closer than T/4000 joined so
// that a 175B timeline stays a few thousand rectangles.
std::string timeline_svg(const strategies::Simulation& s) {
  const sim::TaskGraph& g = s.job.graph;
  const sim::Result& r = s.result;
  const double T = std::max(r.makespan_s, 1e-12), merge = T / 4000;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> rows;
  for (size_t i = 0; i < g.size(); ++i) {
    const sim::Task& t = g.task(static_cast<sim::TaskId>(i));
    if (r.end_s[i] < 0 || r.end_s[i] <= r.start_s[i]) continue;
    for (int d : g.devices_of(t)) rows[{d, t.stream}].push_back({r.start_s[i], r.end_s[i]});
  }
  const double W = 1100, left = 190, row_h = 16, span = W - left - 10;
  Svg svg(W, 40 + row_h * rows.size(), 11, "timeline");
  svg.open_group("timeline-bars");
  double y = 20;
  for (auto& [key, iv] : rows) {
    std::sort(iv.begin(), iv.end());
    const std::string& stream = g.stream_names()[key.second];
    svg.text(4, y + 11, g.devices()[key.first].name + " " + stream);
    double a = iv[0].first, b = iv[0].second;
    auto flush = [&] {
      svg.rect(left + span * a / T, y, std::max(0.3, span * (b - a) / T), row_h - 3, colour_of(stream));
    };
    for (size_t k = 1; k < iv.size(); ++k) {
      if (iv[k].first - b <= merge) {
        b = std::max(b, iv[k].second);
      } else {
        flush();
        a = iv[k].first;
        b = iv[k].second;
      }
    }
    flush();
    y += row_h;
  }
  svg.close_group().text(left, y + 14, "0").text(W - 10, y + 14, units::format_time(T), "text-anchor=\"end\"");
  return svg.str();
}

// A step line per device, at most one column of points per pixel (the highest level in it).
std::vector<std::pair<double, double>> memory_line(const sim::MemoryProfile& p, double T, double left, double W,
                                                   double top, double base, double h) {
  auto X = [&](double t) { return left + (W - left - 200) * t / T; };
  auto Y = [&](double b) { return base - h * b / std::max(top, 1.0); };
  std::vector<std::pair<double, double>> pts;
  double last = p.resident_bytes, column_max = last;
  int column = -1;
  auto emit = [&](int col, double before, double peak) {
    pts.push_back({col, Y(before)});
    pts.push_back({col, Y(peak)});
  };
  for (const auto& [t, b] : p.timeline) {
    const int col = static_cast<int>(X(t));
    if (col != column) {
      if (column >= 0) emit(column, column_max, last);
      column = col;
      column_max = std::max(last, b);
    } else {
      column_max = std::max(column_max, b);
    }
    last = b;
  }
  if (column >= 0) emit(column, column_max, last);
  pts.push_back({X(T), Y(last)});
  return pts;
}

std::string memory_svg(const strategies::Simulation& s) {
  const auto profiles = sim::memory_profiles(s.job.graph, s.result, true);
  const double T = std::max(s.result.makespan_s, 1e-12);
  double top = 0;
  for (size_t d = 0; d < profiles.size(); ++d)
    top = std::max({top, profiles[d].peak_bytes, s.job.graph.devices()[d].capacity_bytes});
  const double W = 1100, left = 70, base = 260, h = 230, right = left + (W - left - 200);
  auto Y = [&](double b) { return base - h * b / std::max(top, 1.0); };
  Svg svg(W, 300);
  for (size_t d = 0; d < profiles.size() && d < 16; ++d) {
    svg.polyline(memory_line(profiles[d], T, left, W, top, base, h), series_colour(d), 1.5);
    svg.text(W - 190, 20 + 14 * d,
             s.job.graph.devices()[d].name + " peak " + units::format_bytes(profiles[d].peak_bytes),
             "fill=\"" + series_colour(d) + "\"");
    const double cap = s.job.graph.devices()[d].capacity_bytes;
    if (cap > 0 && d == 0)
      svg.line(left, Y(cap), right, Y(cap), "#999", true)
          .text(left + 4, Y(cap) - 4, "capacity " + units::format_bytes(cap), "fill=\"#666\"");
  }
  svg.line(left, base, right, base, "black").text(4, Y(top) + 4, units::format_bytes(top));
  svg.text(right, base + 16, units::format_time(T), "text-anchor=\"end\"");
  return svg.str();
}

std::string breakdown_svg(const strategies::Report& r) {
  const double W = 1100, left = 190, bar = 18, T = std::max(r.iteration_time_s, 1e-12);
  Svg svg(W, 40 + 24 * r.simulated.size());
  double y = 10;
  for (const auto& d : r.simulated) {
    const double parts[] = {d.compute_s, d.exposed_communication_s, d.idle_s};
    const char* colours[] = {"#4e79a7", "#e15759", "#bab0ac"};
    const char* names[] = {"compute ", "exposed communication ", "idle (bubble) "};
    svg.text(4, y + 13, d.name + " (stage " + std::to_string(d.stage) + ")");
    double x = left;
    for (int k = 0; k < 3; ++k) {
      const double w = (W - left - 20) * std::max(0.0, parts[k]) / T;
      svg.rect(x, y, w, bar, colours[k], names[k] + units::format_time(parts[k]));
      x += w;
    }
    y += 24;
  }
  svg.text(left, y + 14, "compute", "fill=\"#4e79a7\"")
      .text(left + 70, y + 14, "exposed communication", "fill=\"#e15759\"");
  svg.text(left + 230, y + 14, "idle (bubble)", "fill=\"#7f7f7f\"");
  return svg.str();
}

std::string links_svg(const strategies::Simulation& s) {
  const auto& links = s.report.links;
  const double W = 1100, left = 330, bar = 16;
  Svg svg(W, 30 + 22 * links.size());
  double y = 8;
  for (size_t k = 0; k < links.size(); ++k) {
    const strategies::LinkReport& l = links[k];
    svg.text(4, y + 12, l.direction, k == 0 ? "font-weight=\"bold\"" : "");
    svg.rect(left, y, (W - left - 390) * l.utilization, bar, k == 0 ? "#e15759" : "#76b7b2");
    std::string label = units::format_bytes(l.bytes) + fmt(", %.1f%% busy", 100 * l.utilization);
    if (l.in_flight_s >= 0)
      label += ", in flight " + units::format_time(l.in_flight_s) + fmt(", at most %d flows", l.peak_flows);
    else if (l.demand > 1)
      label += fmt(" (needs %.2fx: not shared)", l.demand);
    svg.text(W - 380, y + 12, label);
    y += 22;
  }
  return svg.str();
}

void write_summary_table(std::ostream& out, const strategies::Report& r) {
  auto row = [&](const std::string& k, const std::string& v) {
    out << "<tr><th>" << escape(k) << "</th><td>" << escape(v) << "</td></tr>\n";
  };
  row("engine", r.engine);
  if (r.stopped) {
    row("iteration time",
        "none: the iteration stopped at " + units::format_time(r.stopped_at_s) + " (" + r.stop_cause + ")");
  } else {
    row("iteration time", units::format_time(r.iteration_time_s));
    const strategies::ValidationBand& v = r.validation;
    if (v.has_band)
      row("validated band", units::format_time(v.low_s) + " to " + units::format_time(v.high_s) +
                                fmt(" (measured / predicted %.2f to %.2f over ", v.ratio_low, v.ratio_high) +
                                v.runs_text() + " not fitted to)");
    std::string outside;
    for (const std::string& o : v.outside) outside += (outside.empty() ? "" : "; ") + o;
    if (!outside.empty()) row("outside validation", outside);
    for (const std::string& line : calibration_lines(r)) row("calibration", line);
    row("model TFLOP/s per GPU", fmt("%.1f (MFU %.1f%%)", r.tflops_per_gpu, 100 * r.mfu));
  }
  row("pipeline bubble", fmt("%.1f%%", 100 * r.bubble_fraction));
  if (const std::string line = communication_line(r.communication); !line.empty()) row("communication per GPU", line);
  row("GPUs", std::to_string(r.gpus) + " simulated as " + std::to_string(r.simulated.size()) + " devices, " +
                  std::to_string(r.tasks) + " tasks");
  row("memory", (r.oom ? "DOES NOT FIT: " : "fits: ") + units::format_bytes(r.peak_memory_bytes) + " of " +
                    units::format_bytes(r.capacity_bytes) + " (" + r.fullest_gpu + ")");
  row("busiest link", r.busiest_link.name + fmt(", %.1f%% busy", 100 * r.busiest_link.utilization));
}

// Zoom and pan by rewriting the timeline's viewBox; nothing else runs.
const char* kZoomScript =
    "<script>\n(function(){\n  var svg=document.getElementById('timeline');\n"
    "  var w=svg.width.baseVal.value, h=svg.height.baseVal.value, vb=[0,0,w,h];\n"
    "  function set(){svg.setAttribute('viewBox',vb.join(' '));}\n  set();\n"
    "  svg.addEventListener('wheel',function(e){e.preventDefault();var r=svg.getBoundingClientRect();"
    "var fx=(e.clientX-r.left)/r.width;var k=e.deltaY<0?0.8:1.25;var nw=Math.min(w,Math.max(w/1000,vb[2]*k));"
    "vb[0]=Math.max(0,Math.min(w-nw,vb[0]+(vb[2]-nw)*fx));vb[2]=nw;set();},{passive:false});\n"
    "  var drag=null;svg.addEventListener('mousedown',function(e){drag=[e.clientX,vb[0]];});\n"
    "  window.addEventListener('mouseup',function(){drag=null;});\n"
    "  window.addEventListener('mousemove',function(e){if(!drag)return;var r=svg.getBoundingClientRect();"
    "vb[0]=Math.max(0,Math.min(w-vb[2],drag[1]-(e.clientX-drag[0])*vb[2]/r.width));set();});\n"
    "  svg.addEventListener('dblclick',function(){vb=[0,0,w,h];set();});\n"
    "  document.body.setAttribute('data-rendered','yes');\n})();\n</script>\n";

}  // namespace

void write_html_report(std::ostream& out, const strategies::Simulation& s, const platforms::Cluster& cluster) {
  const strategies::Report& r = s.report;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dejavu: " << escape(r.workload)
      << " on " << escape(r.platform)
      << "</title>\n<style>body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:"
         "collapse}td,th{padding:3px 10px;text-align:left;border-bottom:1px solid #ddd}h2{margin-top:28px}"
         ".zoom{overflow:hidden;border:1px solid #ccc;cursor:grab}</style></head>\n<body>\n";
  out << "<h1>" << escape(r.workload) << " on " << escape(r.platform) << ", plan " << escape(r.plan)
      << "</h1>\n<table>\n";
  write_summary_table(out, r);
  out << "</table>\n<h2>Timeline</h2>\n<p>Per simulated GPU and stream; drag to pan, wheel to zoom, double-click to "
         "reset.</p>\n<div class=\"zoom\" id=\"timeline-box\">"
      << timeline_svg(s) << "</div>\n<h2>Memory over time</h2>\n"
      << memory_svg(s) << "<h2>Time per stage</h2>\n"
      << breakdown_svg(r) << "<h2>Traffic per link (busiest first)</h2>\n"
      << links_svg(s) << kZoomScript << "</body></html>\n";
}

std::vector<std::string> report_svg_names() { return {"timeline.svg", "memory.svg", "breakdown.svg", "links.svg"}; }

void write_report_svgs(tools::OutputSet& out, const std::string& dir, const strategies::Simulation& s,
                       const platforms::Cluster& cluster) {
  const std::filesystem::path d(dir);
  out.write((d / "timeline.svg").string(), [&](std::ostream& o) { o << timeline_svg(s); });
  out.write((d / "memory.svg").string(), [&](std::ostream& o) { o << memory_svg(s); });
  out.write((d / "breakdown.svg").string(), [&](std::ostream& o) { o << breakdown_svg(s.report); });
  out.write((d / "links.svg").string(), [&](std::ostream& o) { o << links_svg(s); });
}

}  // namespace dejavu::report
