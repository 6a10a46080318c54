#include "tools/html_report.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <vector>

#include "sim/memory.h"
#include "sim/units.h"
#include "tools/output_file.h"

namespace dejavu::tools {

namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : c == '"' ? "&quot;" : std::string(1, c);
  return o;
}

std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

const char* color_of(const std::string& stream) {
  if (stream == "compute") return "#4e79a7";
  if (stream == "tp-comm") return "#f28e2b";
  if (stream == "pp-comm") return "#59a14f";
  if (stream == "dp-comm") return "#e15759";
  if (stream == "ep-comm") return "#b07aa1";
  return "#9c755f";
}

// Rows (device, stream) with their busy intervals, neighbours closer than `merge_s` joined
// so a 175B timeline stays a few thousand rectangles.
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
  const int W = 1100, left = 190, row_h = 16;
  std::ostringstream o;
  o << "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\""
    << 40 + row_h * rows.size() << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  o << "<g id=\"timeline-bars\">\n";
  int y = 20;
  for (auto& [key, iv] : rows) {
    std::sort(iv.begin(), iv.end());
    const std::string& stream = g.stream_names()[key.second];
    o << "<text x=\"4\" y=\"" << y + 11 << "\">" << esc(g.devices()[key.first].name + " " + stream) << "</text>\n";
    double a = iv[0].first, b = iv[0].second;
    auto flush = [&] {
      o << "<rect x=\"" << fmt("%.2f", left + (W - left - 10) * a / T) << "\" y=\"" << y << "\" width=\""
        << fmt("%.3f", std::max(0.3, (W - left - 10) * (b - a) / T)) << "\" height=\"" << row_h - 3 << "\" fill=\""
        << color_of(stream) << "\"/>\n";
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
  o << "</g>\n<text x=\"" << left << "\" y=\"" << y + 14 << "\">0</text><text x=\"" << W - 10 << "\" y=\"" << y + 14
    << "\" text-anchor=\"end\">" << esc(units::format_time(T)) << "</text>\n</svg>\n";
  return o.str();
}

std::string memory_svg(const strategies::Simulation& s) {
  const auto profiles = sim::memory_profiles(s.job.graph, s.result, true);
  const double T = std::max(s.result.makespan_s, 1e-12);
  double top = 0;
  for (size_t d = 0; d < profiles.size(); ++d)
    top = std::max({top, profiles[d].peak_bytes, s.job.graph.devices()[d].capacity_bytes});
  const int W = 1100, H = 300, left = 70, base = 260, h = 230;
  const char* colors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"};
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  auto X = [&](double t) { return left + (W - left - 200) * t / T; };
  auto Y = [&](double b) { return base - h * b / std::max(top, 1.0); };
  for (size_t d = 0; d < profiles.size() && d < 16; ++d) {
    // A step line, at most one column of points per pixel: the highest level in it.
    std::string pts;
    double last = profiles[d].resident_bytes;
    int column = -1;
    double column_max = last;
    auto emit = [&](int col, double level_before, double peak) {
      pts += fmt("%.0f,%.1f %.0f,%.1f ", col, Y(level_before), col, Y(peak));
    };
    for (const auto& [t, b] : profiles[d].timeline) {
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
    pts += fmt("%.1f,%.1f", X(T), Y(last));
    o << "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" << colors[d % 8] << "\" points=\"" << pts << "\"/>\n";
    o << "<text x=\"" << W - 190 << "\" y=\"" << 20 + 14 * d << "\" fill=\"" << colors[d % 8] << "\">"
      << esc(s.job.graph.devices()[d].name + " peak " + units::format_bytes(profiles[d].peak_bytes)) << "</text>\n";
    const double cap = s.job.graph.devices()[d].capacity_bytes;
    if (cap > 0 && d == 0)
      o << "<line x1=\"" << left << "\" x2=\"" << X(T) << "\" y1=\"" << Y(cap) << "\" y2=\"" << Y(cap)
        << "\" stroke=\"#999\" stroke-dasharray=\"4 4\"/><text x=\"" << left + 4 << "\" y=\"" << Y(cap) - 4
        << "\" fill=\"#666\">capacity " << esc(units::format_bytes(cap)) << "</text>\n";
  }
  o << "<line x1=\"" << left << "\" y1=\"" << base << "\" x2=\"" << X(T) << "\" y2=\"" << base << "\" stroke=\"black\"/>\n";
  o << "<text x=\"4\" y=\"" << Y(top) + 4 << "\">" << esc(units::format_bytes(top)) << "</text><text x=\"" << X(T)
    << "\" y=\"" << base + 16 << "\" text-anchor=\"end\">" << esc(units::format_time(T)) << "</text>\n</svg>\n";
  return o.str();
}

std::string breakdown_svg(const strategies::Report& r) {
  const int W = 1100, left = 190, bar = 18;
  double T = std::max(r.iteration_time_s, 1e-12);
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << 40 + 24 * r.simulated.size()
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  int y = 10;
  for (const auto& d : r.simulated) {
    const double parts[] = {d.compute_s, d.exposed_communication_s, d.idle_s};
    const char* colors[] = {"#4e79a7", "#e15759", "#bab0ac"};
    o << "<text x=\"4\" y=\"" << y + 13 << "\">" << esc(d.name + " (stage " + std::to_string(d.stage) + ")") << "</text>\n";
    double x = left;
    for (int k = 0; k < 3; ++k) {
      const double w = (W - left - 20) * std::max(0.0, parts[k]) / T;
      o << "<rect x=\"" << fmt("%.1f", x) << "\" y=\"" << y << "\" width=\"" << fmt("%.1f", w) << "\" height=\"" << bar
        << "\" fill=\"" << colors[k] << "\"><title>" << (k == 0 ? "compute " : k == 1 ? "exposed communication " : "idle (bubble) ")
        << esc(units::format_time(parts[k])) << "</title></rect>\n";
      x += w;
    }
    y += 24;
  }
  o << "<text x=\"" << left << "\" y=\"" << y + 14
    << "\"><tspan fill=\"#4e79a7\">compute</tspan>  <tspan fill=\"#e15759\">exposed communication</tspan>  "
       "<tspan fill=\"#7f7f7f\">idle (bubble)</tspan></text>\n</svg>\n";
  return o.str();
}

std::string links_svg(const strategies::Simulation& s, const platforms::Cluster& cluster) {
  const auto& net = cluster.network;
  std::vector<std::pair<double, int>> order;
  for (size_t i = 0; i < s.result.link_bytes.size(); ++i)
    if (s.result.link_bytes[i] > 0) order.push_back({s.result.link_bytes[i], static_cast<int>(i)});
  std::sort(order.begin(), order.end(), std::greater<>());
  if (order.size() > 15) order.resize(15);
  const int W = 1100, left = 330, bar = 16;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << 30 + 22 * order.size()
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  int y = 8;
  const double T = std::max(s.result.makespan_s, 1e-12);
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& [bytes, dir] = order[k];
    const sim::Link& l = net.link(dir / 2);
    const std::string a = net.node(dir % 2 == 0 ? l.a : l.b).name, b = net.node(dir % 2 == 0 ? l.b : l.a).name;
    const double demand = bytes / (l.bandwidth_Bps * T), util = strategies::busy_fraction(demand);
    o << "<text x=\"4\" y=\"" << y + 12 << "\"" << (k == 0 ? " font-weight=\"bold\"" : "") << ">" << esc(a + " -> " + b)
      << "</text>\n<rect x=\"" << left << "\" y=\"" << y << "\" width=\"" << fmt("%.1f", (W - left - 160) * util)
      << "\" height=\"" << bar << "\" fill=\"" << (k == 0 ? "#e15759" : "#76b7b2") << "\"/>\n<text x=\"" << W - 150
      << "\" y=\"" << y + 12 << "\">" << esc(units::format_bytes(bytes) + fmt(", %.1f%% busy", 100 * util) +
                                        (demand > 1 ? fmt(" (needs %.2fx: not shared)", demand) : ""))
      << "</text>\n";
    y += 22;
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace

void write_html_report(std::ostream& out, const strategies::Simulation& s, const platforms::Cluster& cluster) {
  const strategies::Report& r = s.report;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dejavu: " << esc(r.workload) << " on "
      << esc(r.platform) << "</title>\n<style>body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:"
         "collapse}td,th{padding:3px 10px;text-align:left;border-bottom:1px solid #ddd}h2{margin-top:28px}"
         ".zoom{overflow:hidden;border:1px solid #ccc;cursor:grab}</style></head>\n<body>\n";
  out << "<h1>" << esc(r.workload) << " on " << esc(r.platform) << ", plan " << esc(r.plan) << "</h1>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v) { out << "<tr><th>" << esc(k) << "</th><td>" << esc(v) << "</td></tr>\n"; };
  row("engine", r.engine);
  if (r.stopped) {
    row("iteration time", "none: the iteration stopped at " + units::format_time(r.stopped_at_s) + " (" + r.stop_cause + ")");
  } else {
    row("iteration time", units::format_time(r.iteration_time_s));
    row("model TFLOP/s per GPU", fmt("%.1f (MFU %.1f%%)", r.tflops_per_gpu, 100 * r.mfu));
  }
  row("pipeline bubble", fmt("%.1f%%", 100 * r.bubble_fraction));
  row("GPUs", std::to_string(r.gpus) + " simulated as " + std::to_string(r.simulated.size()) + " devices, " +
                  std::to_string(r.tasks) + " tasks");
  row("memory", (r.oom ? "DOES NOT FIT: " : "fits: ") + units::format_bytes(r.peak_memory_bytes) + " of " +
                    units::format_bytes(r.capacity_bytes) + " (" + r.fullest_gpu + ")");
  row("busiest link", r.busiest_link.name + fmt(", %.1f%% busy", 100 * r.busiest_link.utilization));
  out << "</table>\n<h2>Timeline</h2>\n<p>Per simulated GPU and stream; drag to pan, wheel to zoom, double-click to "
         "reset.</p>\n<div class=\"zoom\" id=\"timeline-box\">"
      << timeline_svg(s) << "</div>\n<h2>Memory over time</h2>\n" << memory_svg(s)
      << "<h2>Time per stage</h2>\n" << breakdown_svg(r) << "<h2>Traffic per link (busiest first)</h2>\n"
      << links_svg(s, cluster);
  // Zoom and pan by rewriting the timeline's viewBox; nothing else runs.
  out << "<script>\n(function(){\n  var svg=document.getElementById('timeline');\n"
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
         "  document.body.setAttribute('data-rendered','yes');\n})();\n</script>\n</body></html>\n";
}

std::vector<std::string> report_svg_names() { return {"timeline.svg", "memory.svg", "breakdown.svg", "links.svg"}; }

void write_report_svgs(OutputSet& out, const std::string& dir, const strategies::Simulation& s,
                       const platforms::Cluster& cluster) {
  const std::filesystem::path d(dir);
  out.write((d / "timeline.svg").string(), [&](std::ostream& o) { o << timeline_svg(s); });
  out.write((d / "memory.svg").string(), [&](std::ostream& o) { o << memory_svg(s); });
  out.write((d / "breakdown.svg").string(), [&](std::ostream& o) { o << breakdown_svg(s.report); });
  out.write((d / "links.svg").string(), [&](std::ostream& o) { o << links_svg(s, cluster); });
}

}  // namespace dejavu::tools
