// `dejavu simulate --report report.html`: one self-contained HTML file (inline SVG and a few
// lines of script, nothing fetched) with the summary, a zoomable timeline per GPU and
// stream, memory over time per GPU, the time breakdown per stage and the traffic per link.
#pragma once

#include <ostream>
#include <string>

#include "platforms/cluster.h"
#include "strategies/simulate.h"

namespace dejavu::tools {

void write_html_report(std::ostream& out, const strategies::Simulation& s, const platforms::Cluster& cluster);

// The same views as separate SVG files in `dir` (timeline.svg, memory.svg, breakdown.svg,
// links.svg), for papers.
void write_report_svgs(const std::string& dir, const strategies::Simulation& s, const platforms::Cluster& cluster);

}  // namespace dejavu::tools
