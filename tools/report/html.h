// `dejavu simulate --report report.html`: one self-contained HTML file (inline SVG and a few
// lines of script, nothing fetched) with the summary, a zoomable timeline per GPU and
// stream, memory over time per GPU, the time breakdown per stage and the traffic per link;
// `--plot` writes the same views as SVG files for papers.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "strategies/simulate.h"
#include "tools/output_file.h"

namespace dejavu::report {

void write_html_report(std::ostream& out, const strategies::Simulation& s, const platforms::Cluster& cluster);

// The views as separate SVG files in `dir`, written as outputs of `out`.
std::vector<std::string> report_svg_names();
void write_report_svgs(tools::OutputSet& out, const std::string& dir, const strategies::Simulation& s,
                       const platforms::Cluster& cluster);

}  // namespace dejavu::report
