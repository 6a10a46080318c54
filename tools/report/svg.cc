#include "tools/report/svg.h"

#include <cstdio>

namespace dejavu::report {

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s)
    o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : c == '"' ? "&quot;" : std::string(1, c);
  return o;
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  return buf;
}

Svg::Svg(double width, double height, int font_size, const std::string& id, bool white) {
  body_ = "<svg" + (id.empty() ? std::string() : " id=\"" + escape(id) + "\"") +
          " xmlns=\"http://www.w3.org/2000/svg\" width=\"" + number(width) + "\" height=\"" + number(height) +
          "\" font-family=\"sans-serif\" font-size=\"" + std::to_string(font_size) + "\">\n";
  if (white) body_ += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
}

Svg& Svg::text(double x, double y, const std::string& text, const std::string& attrs) {
  body_ += "<text x=\"" + number(x) + "\" y=\"" + number(y) + "\"" + (attrs.empty() ? "" : " " + attrs) + ">" +
           escape(text) + "</text>\n";
  return *this;
}

Svg& Svg::line(double x1, double y1, double x2, double y2, const std::string& stroke, bool dashed) {
  body_ += "<line x1=\"" + number(x1) + "\" y1=\"" + number(y1) + "\" x2=\"" + number(x2) + "\" y2=\"" + number(y2) +
           "\" stroke=\"" + stroke + "\"" + (dashed ? " stroke-dasharray=\"4 4\"" : "") + "/>\n";
  return *this;
}

Svg& Svg::rect(double x, double y, double w, double h, const std::string& fill, const std::string& tooltip,
               const std::string& attrs) {
  body_ += "<rect x=\"" + number(x) + "\" y=\"" + number(y) + "\" width=\"" + number(w) + "\" height=\"" + number(h) +
           "\" fill=\"" + fill + "\"" + (attrs.empty() ? "" : " " + attrs);
  body_ += tooltip.empty() ? "/>\n" : "><title>" + escape(tooltip) + "</title></rect>\n";
  return *this;
}

Svg& Svg::polyline(const std::vector<std::pair<double, double>>& points, const std::string& stroke, double width) {
  std::string pts;
  for (const auto& [x, y] : points) pts += number(x) + "," + number(y) + " ";
  body_ += "<polyline fill=\"none\" stroke=\"" + stroke + "\" stroke-width=\"" + number(width) + "\" points=\"" + pts +
           "\"/>\n";
  return *this;
}

Svg& Svg::circle(double cx, double cy, double r, const std::string& fill) {
  body_ +=
      "<circle cx=\"" + number(cx) + "\" cy=\"" + number(cy) + "\" r=\"" + number(r) + "\" fill=\"" + fill + "\"/>\n";
  return *this;
}

Svg& Svg::open_group(const std::string& id) {
  body_ += "<g id=\"" + escape(id) + "\">\n";
  return *this;
}

Svg& Svg::close_group() {
  body_ += "</g>\n";
  return *this;
}

const std::string& series_colour(size_t i) {
  static const std::string colours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                        "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"};
  return colours[i % 8];
}

}  // namespace dejavu::report
