#include "platforms/simgrid_xml.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

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

void header(std::ostream& out, const Cluster& c) {
  out << "<?xml version='1.0'?>\n"
         "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<!-- "
      << xml_escape(c.name)
      << ", written by dejavu export-platform. Run with --cfg=network/model:CM02 "
         "--cfg=network/crosstraffic:0 --cfg=network/TCP-gamma:0 for links that mean "
         "exactly their bandwidth and latency. -->\n"
         "<platform version=\"4.1\">\n";
}

// A host of the network: a GPU (its type as a property) or a server's host side (`gpu` null).
void host(std::ostream& out, const Cluster& c, int node, const GpuSlot* gpu, const char* indent) {
  out << indent << "<host id=\"" << xml_escape(c.network.node(node).name) << "\" speed=\"1Gf\">"
      << "<prop id=\"" << (gpu ? "gpu" : "role") << "\" value=\"" << (gpu ? xml_escape(gpu->spec->name) : "cpu")
      << "\"/></host>\n";
}

// Every host of the network (GPUs and host sides), each with its GPU slot or null.
std::vector<std::pair<int, const GpuSlot*>> hosts_of(const Cluster& c) {
  std::vector<const GpuSlot*> gpu_of(static_cast<size_t>(c.network.node_count()), nullptr);
  for (const GpuSlot& g : c.gpus) gpu_of[static_cast<size_t>(g.host)] = &g;
  std::vector<std::pair<int, const GpuSlot*>> out;
  for (int v = 0; v < c.network.node_count(); ++v)
    if (c.network.node(v).is_host) out.emplace_back(v, gpu_of[static_cast<size_t>(v)]);
  return out;
}

void link(std::ostream& out, const sim::Link& l, const char* indent) {
  out << indent << "<link id=\"" << xml_escape(l.name) << "\" bandwidth=\"" << num(l.bandwidth_Bps)
      << "Bps\" latency=\"" << num(l.latency_s) << "s\" sharing_policy=\"SPLITDUPLEX\"/>\n";
}

void route(std::ostream& out, const sim::Network& net, const std::string& src, const std::string& dst,
           const std::vector<sim::Hop>& hops, const char* indent, const char* element = "route",
           const std::string& gateways = "") {
  out << indent << "<" << element << " src=\"" << xml_escape(src) << "\" dst=\"" << xml_escape(dst) << "\"" << gateways
      << " symmetrical=\"NO\">";
  for (const sim::Hop& h : hops)
    out << "<link_ctn id=\"" << xml_escape(net.link(h.link).name) << "\" direction=\"" << (h.forward ? "UP" : "DOWN")
        << "\"/>";
  out << "</" << element << ">\n";
}

std::vector<sim::Hop> reversed(const std::vector<sim::Hop>& hops) {
  std::vector<sim::Hop> out;
  for (auto it = hops.rbegin(); it != hops.rend(); ++it) out.push_back({it->link, !it->forward});
  return out;
}

ExportSummary write_flat(std::ostream& out, const Cluster& c) {
  if (c.gpu_count() > kMaxFlatExportGpus)
    throw ModelError("platform " + c.name + " has " + std::to_string(c.gpu_count()) +
                     " GPUs; without leaf switches to group them by (a rail-optimized fabric), export-platform "
                     "writes one route per GPU pair and stops at " +
                     std::to_string(kMaxFlatExportGpus));
  const sim::Network& net = c.network;
  ExportSummary s{0, net.link_count(), 0, 1};
  s.hosts = static_cast<long long>(hosts_of(c).size());
  header(out, c);
  out << "  <zone id=\"" << xml_escape(c.name) << "\" routing=\"Full\">\n";
  const auto hosts = hosts_of(c);
  for (const auto& [v, gpu] : hosts) host(out, c, v, gpu, "    ");
  for (const sim::Link& l : net.links()) link(out, l, "    ");
  for (const auto& a : hosts)
    for (const auto& b : hosts)
      if (a.first != b.first) {
        route(out, net, net.node(a.first).name, net.node(b.first).name, net.route(a.first, b.first), "    ");
        ++s.routes;
      }
  out << "  </zone>\n</platform>\n";
  return s;
}

// One leaf's zone: its GPUs, the links inside, the routes among them and to its gateway.
void write_leaf(std::ostream& out, const Cluster& c, const sim::Hierarchy::Leaf& leaf, const std::string& zone,
                const std::vector<const GpuSlot*>& gpu_of, ExportSummary& s) {
  const sim::Network& net = c.network;
  const sim::Hierarchy& h = *net.hierarchy();
  ++s.zones;
  out << "    <zone id=\"" << xml_escape(zone) << "\" routing=\"Full\">\n";
  for (int a : leaf.hosts) host(out, c, a, gpu_of[a], "      ");
  std::set<int> inside;
  for (int a : leaf.hosts) {
    for (const sim::Hop& hop : h.up[a]) inside.insert(hop.link);
    for (int b : leaf.hosts)
      if (a != b)
        for (const sim::Hop& hop : net.route(a, b)) inside.insert(hop.link);
  }
  for (int l : inside) link(out, net.link(l), "      ");
  const std::string gateway = zone + "/gateway";
  out << "      <router id=\"" << xml_escape(gateway) << "\"/>\n";
  for (int a : leaf.hosts) {
    for (int b : leaf.hosts)
      if (a != b) route(out, net, net.node(a).name, net.node(b).name, net.route(a, b), "      ");
    route(out, net, net.node(a).name, gateway, h.up[a], "      ");
    route(out, net, gateway, net.node(a).name, reversed(h.up[a]), "      ");
    s.routes += static_cast<long long>(leaf.hosts.size()) + 1;
  }
  s.links += static_cast<long long>(inside.size());
  out << "    </zone>\n";
}

// Leaves go in pods of `per_pod` (a Full zone of leaf zones and an "up" zone whose router
// stands for the spine), pods in the root (a Full zone): routes between leaves of a pod are
// their two uplinks; between pods, the two uplinks with a FATPIPE link between that stands
// for the non-blocking spine (it carries the sum of the uplinks, so no flow is ever slowed
// there). About L·per_pod + (L/per_pod)² zone routes for L leaves: fewest near (2L)^(1/3).
void write_pod(std::ostream& out, const sim::Network& net, const std::vector<int>& leaves, const std::string& pod,
               ExportSummary& s) {
  const sim::Hierarchy& h = *net.hierarchy();
  auto leaf = [](int l) { return "leaf" + std::to_string(l); };
  auto gw = [](const std::string& zone) { return " gw_src=\"" + xml_escape(zone) + "/gateway\""; };
  auto to = [](const std::string& zone) { return " gw_dst=\"" + xml_escape(zone) + "/gateway\""; };
  out << "    <zone id=\"" << pod << "/up\" routing=\"Full\"><router id=\"" << pod << "/up/gateway\"/></zone>\n";
  for (int l : leaves)
    if (h.leaves[l].uplink >= 0) link(out, net.link(h.leaves[l].uplink), "    ");
  for (int l : leaves) {
    const int up = h.leaves[l].uplink;
    if (up < 0) continue;
    ++s.links;
    route(out, net, leaf(l), pod + "/up", {{up, true}}, "    ", "zoneRoute", gw(leaf(l)) + to(pod + "/up"));
    route(out, net, pod + "/up", leaf(l), {{up, false}}, "    ", "zoneRoute", gw(pod + "/up") + to(leaf(l)));
    s.routes += 2;
    for (int m : leaves)
      if (m != l && h.leaves[m].uplink >= 0) {
        route(out, net, leaf(l), leaf(m), {{up, true}, {h.leaves[m].uplink, false}}, "    ", "zoneRoute",
              gw(leaf(l)) + to(leaf(m)));
        ++s.routes;
      }
  }
}

ExportSummary write_zoned(std::ostream& out, const Cluster& c) {
  const sim::Network& net = c.network;
  const sim::Hierarchy& h = *net.hierarchy();
  std::vector<const GpuSlot*> gpu_of(static_cast<size_t>(net.node_count()), nullptr);
  for (const GpuSlot& g : c.gpus) gpu_of[static_cast<size_t>(g.host)] = &g;
  const int leaves = static_cast<int>(h.leaves.size());
  const int per_pod = std::max(1, static_cast<int>(std::ceil(std::cbrt(2.0 * leaves))));
  const int pods = (leaves + per_pod - 1) / per_pod;
  ExportSummary s{static_cast<long long>(hosts_of(c).size()), 0, 0, 1};
  header(out, c);
  out << "  <zone id=\"" << xml_escape(c.name) << "\" routing=\"Full\">\n";
  double uplinks = 0;
  for (const auto& leaf : h.leaves) uplinks += leaf.uplink >= 0 ? net.link(leaf.uplink).bandwidth_Bps : 0;
  for (int p = 0; p < pods; ++p) {
    const std::string pod = "pod" + std::to_string(p);
    out << "  <zone id=\"" << pod << "\" routing=\"Full\">\n";
    std::vector<int> members;
    for (int l = p * per_pod; l < std::min(leaves, (p + 1) * per_pod); ++l) {
      members.push_back(l);
      write_leaf(out, c, h.leaves[l], "leaf" + std::to_string(l), gpu_of, s);
    }
    write_pod(out, net, members, pod, s);
    out << "  </zone>\n";
    s.zones += 2;
  }
  if (pods > 1)
    out << "  <link id=\"spine\" bandwidth=\"" << num(uplinks) << "Bps\" latency=\"0s\" sharing_policy=\"FATPIPE\"/>\n";
  for (int a = 0; a < pods; ++a)
    for (int b = 0; b < pods; ++b)
      if (a != b) {
        out << "  <zoneRoute src=\"pod" << a << "\" dst=\"pod" << b << "\" gw_src=\"pod" << a
            << "/up/gateway\" gw_dst=\"pod" << b
            << "/up/gateway\" symmetrical=\"NO\"><link_ctn id=\"spine\"/></zoneRoute>\n";
        ++s.routes;
      }
  out << "  </zone>\n</platform>\n";
  return s;
}

}  // namespace

ExportSummary write_simgrid_platform(std::ostream& out, const Cluster& c) {
  return c.network.hierarchy() ? write_zoned(out, c) : write_flat(out, c);
}

}  // namespace dejavu::platforms
