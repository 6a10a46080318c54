// The one SVG writer every view draws with (the HTML report's timeline, memory, breakdown
// and links; the convergence curves; the sweep's heatmap and line): elements added one by
// one, text escaped, coordinates with one decimal, the header and the closing tag once.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace dejavu::report {

std::string escape(const std::string& text);  // for XML text and attribute values
std::string number(double x);                 // "%.1f"

class Svg {
 public:
  // `id` names the element (the HTML page's script finds the timeline by it); `white`
  // paints the background (standalone files).
  Svg(double width, double height, int font_size = 11, const std::string& id = "", bool white = false);
  // `attrs` are extra attributes, written as given (fill="#666" text-anchor="end").
  Svg& text(double x, double y, const std::string& text, const std::string& attrs = "");
  Svg& line(double x1, double y1, double x2, double y2, const std::string& stroke, bool dashed = false);
  Svg& rect(double x, double y, double w, double h, const std::string& fill, const std::string& tooltip = "",
            const std::string& attrs = "");
  Svg& polyline(const std::vector<std::pair<double, double>>& points, const std::string& stroke, double width = 2);
  Svg& circle(double cx, double cy, double r, const std::string& fill);
  Svg& open_group(const std::string& id);
  Svg& close_group();
  std::string str() const { return body_ + "</svg>\n"; }

 private:
  std::string body_;
};

// Colours that tell series apart (cycled).
const std::string& series_colour(size_t i);

}  // namespace dejavu::report
