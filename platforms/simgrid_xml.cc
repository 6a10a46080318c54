#include "platforms/simgrid_xml.h"

#include <cstdio>

#include "sim/error.h"

namespace dejavu::platforms {

namespace {
// Exact decimal for doubles, in SimGrid's units ("Bps", "s").
std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}
}  // namespace

void write_simgrid_platform(std::ostream& out, const Cluster& c) {
  if (c.gpu_count() > kMaxExportGpus)
    throw ModelError("platform " + c.name + " has " + std::to_string(c.gpu_count()) +
                     " GPUs; export-platform writes one route per GPU pair and stops at " +
                     std::to_string(kMaxExportGpus));
  const sim::Network& net = c.network;
  out << "<?xml version='1.0'?>\n"
         "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<!-- "
      << xml_escape(c.name)
      << ", written by dejavu export-platform. Run with --cfg=network/model:CM02 "
         "--cfg=network/crosstraffic:0 --cfg=network/TCP-gamma:0 for links that mean "
         "exactly their bandwidth and latency. -->\n"
         "<platform version=\"4.1\">\n"
         "  <zone id=\""
      << xml_escape(c.name) << "\" routing=\"Full\">\n";
  for (const GpuSlot& g : c.gpus)
    out << "    <host id=\"" << xml_escape(net.node(g.host).name) << "\" speed=\"1Gf\">"
        << "<prop id=\"gpu\" value=\"" << xml_escape(g.spec->name) << "\"/></host>\n";
  for (const sim::Link& l : net.links())
    out << "    <link id=\"" << xml_escape(l.name) << "\" bandwidth=\"" << num(l.bandwidth_Bps) << "Bps\" latency=\""
        << num(l.latency_s) << "s\" sharing_policy=\"SPLITDUPLEX\"/>\n";
  for (const GpuSlot& a : c.gpus) {
    for (const GpuSlot& b : c.gpus) {
      if (a.host == b.host) continue;
      out << "    <route src=\"" << xml_escape(net.node(a.host).name) << "\" dst=\""
          << xml_escape(net.node(b.host).name) << "\" symmetrical=\"NO\">";
      for (const sim::Hop& h : net.route(a.host, b.host))
        out << "<link_ctn id=\"" << xml_escape(net.link(h.link).name) << "\" direction=\""
            << (h.forward ? "UP" : "DOWN") << "\"/>";
      out << "</route>\n";
    }
  }
  out << "  </zone>\n</platform>\n";
}

}  // namespace dejavu::platforms
