// `dejavu simulate --report report.html`: one self-contained HTML file (inline SVG and a few
// lines of script, nothing fetched) with the summary, a zoomable timeline per GPU and
// stream, memory over time per GPU, the time breakdown per stage and the traffic per link.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "strategies/simulate.h"
#include "tools/output_file.h"

namespace dejavu::tools {

void write_html_report(std::ostream& out, const strategies::Simulation& s, const platforms::Cluster& cluster);

// The same views as separate SVG files in `dir` (timeline.svg, memory.svg, breakdown.svg,
// links.svg), for papers.
// The SVG files --plot writes, and writing them into `dir` as outputs of `out`.
std::vector<std::string> report_svg_names();
void write_report_svgs(OutputSet& out, const std::string& dir, const strategies::Simulation& s,
                       const platforms::Cluster& cluster);

}  // namespace dejavu::tools
