// export-platform: SimGrid loads the file and routes as dejavu does (read back with
// Host::route_to: the same links in the same directions, the same latency; between pods of
// leaves SimGrid adds the FATPIPE link that stands for the spine switch).
#include "platforms/simgrid_xml.h"

#include <gtest/gtest.h>
#include <simgrid/s4u.hpp>

#include <filesystem>
#include <fstream>

#include "sim/error.h"
#include "sim/fork_runner.h"

namespace dejavu::platforms {
namespace {

std::string preset(const std::string& name) {
  return std::string(DEJAVU_SOURCE_DIR) + "/platforms/presets/" + name + ".yaml";
}

struct Loaded {
  int hosts = 0, checked = 0, mismatches = 0;
};

// Exports `c`, loads it into SimGrid in a child (SimGrid runs once per process) and
// compares the route of each pair of GPU indices with the network's.
Loaded export_and_route(const Cluster& c, const std::vector<std::pair<int, int>>& pairs, ExportSummary* summary) {
  const auto path = std::filesystem::temp_directory_path() / ("dejavu-export-" + std::to_string(::getpid()) + ".xml");
  {
    std::ofstream out(path);
    *summary = write_simgrid_platform(out, c);
  }
  const sim::Result seen = sim::run_in_child([&] {
    int argc = 2;
    char a0[] = "test", a1[] = "--log=root.thresh:critical";
    char* argv[] = {a0, a1, nullptr};
    simgrid::s4u::Engine e(&argc, argv);
    e.load_platform(path.string());
    sim::Result r;
    r.activities = e.get_host_count();
    for (auto [i, j] : pairs) {
      const int a = c.gpus[i].host, b = c.gpus[j].host;
      std::vector<simgrid::s4u::Link*> links;
      double latency = 0;
      simgrid::s4u::Host::by_name(c.network.node(a).name)
          ->route_to(simgrid::s4u::Host::by_name(c.network.node(b).name), links, &latency);
      std::string got, want;
      for (const auto* l : links)
        if (l->get_name() != "spine") got += l->get_name() + " ";  // the spine switch, between pods
      for (const sim::Hop& h : c.network.route(a, b))
        want += c.network.link(h.link).name + (h.forward ? "_UP " : "_DOWN ");
      const bool same = got == want && std::abs(latency - c.network.path_cost(a, b).latency_s) < 1e-15;
      r.link_bytes.push_back(same ? 0 : 1);
    }
    return r;
  });
  std::filesystem::remove(path);
  Loaded l{static_cast<int>(seen.activities), static_cast<int>(seen.link_bytes.size()), 0};
  for (double m : seen.link_bytes) l.mismatches += m > 0;
  return l;
}

std::vector<std::pair<int, int>> all_pairs(int n) {
  std::vector<std::pair<int, int>> out;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) out.emplace_back(i, j);
  return out;
}

TEST(SimGridXml, SimGridLoadsTheExportAndRoutesEveryPairAsDejavuDoes) {
  for (const char* name : {"mixed-a100-h100-2x8", "pcie-l4-2x4", "h100-rail-8x8"}) {
    SCOPED_TRACE(name);
    const Cluster c = load_cluster_file(preset(name));
    ExportSummary s;
    const Loaded l = export_and_route(c, all_pairs(c.gpu_count()), &s);
    EXPECT_EQ(l.hosts, c.gpu_count());
    EXPECT_EQ(l.checked, c.gpu_count() * (c.gpu_count() - 1));
    EXPECT_EQ(l.mismatches, 0);
  }
}

TEST(SimGridXml, AServersHostSideIsAHostRoutedOverItsGpusPcie) {
  // dgx-a100-40gb-1x8: 8 GPUs and the server's CPU (its host side); SimGrid routes every GPU
  // pair as dejavu does, and each GPU reaches the CPU over its PCIe link and switch.
  const Cluster c = load_cluster_file(preset("dgx-a100-40gb-1x8"));
  ExportSummary s;
  const Loaded l = export_and_route(c, all_pairs(c.gpu_count()), &s);
  EXPECT_EQ(s.hosts, 9);
  EXPECT_EQ(l.hosts, 9);
  EXPECT_EQ(l.mismatches, 0);
  const std::vector<sim::Hop> to_cpu = c.network.route(c.gpus[3].host, c.gpus[3].cpu);
  ASSERT_EQ(to_cpu.size(), 2u);
  EXPECT_EQ(c.network.link(to_cpu[0].link).name, "server0/gpu3/pcie");
  EXPECT_EQ(c.network.link(to_cpu[1].link).name, "server0/gpu3/pcie-switch/cpu");
}

TEST(SimGridXml, LeavesOfSeveralServersRouteAsDejavuDoes) {
  const Cluster c = load_cluster(
      ConfigNode::load_string("servers:\n"
                              "  - count: 6\n"
                              "    gpu: H100-SXM-80GB\n"
                              "    gpus_per_server: 2\n"
                              "    intra: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}\n"
                              "    nic: {bandwidth: 400 Gbps, latency: 2 us}\n"
                              "network: {kind: leaf-spine, latency: 1 us, oversubscription: 2, servers_per_leaf: 3}\n",
                              "leaves.yaml"));
  ExportSummary s;
  const Loaded l = export_and_route(c, all_pairs(c.gpu_count()), &s);
  EXPECT_EQ(l.mismatches, 0);
  EXPECT_EQ(s.zones, 5);  // root, one pod and its up zone, two leaves
  // Per leaf: 6 x 5 routes among its GPUs and 6 x 2 to and from its gateway; in the pod each
  // leaf to and from the up zone and to the other leaf.
  EXPECT_EQ(s.routes, 2 * (30 + 12) + 2 * 3);
}

TEST(SimGridXml, AThousandGpusExportInZonesThatGrowWithGpus) {
  // 128 servers of 8, a leaf each: a route per GPU pair would be 1,047,552. By zone: 128
  // leaves of 56 + 16 routes; pods of 7 leaves (the cube root of 256, rounded up): 18 of 7
  // leaves with 7 x (2 + 6) routes, one of 2 with 2 x (2 + 1); 19 x 18 routes between pods.
  const Cluster c = load_cluster_file(preset("dgx-a100-128x8"));
  std::vector<std::pair<int, int>> some;
  for (int i = 0; i < c.gpu_count(); ++i) some.emplace_back(i, (i * 7 + 13) % c.gpu_count());
  ExportSummary s;
  const Loaded l = export_and_route(c, some, &s);
  EXPECT_EQ(l.hosts, 1024);
  EXPECT_EQ(l.mismatches, 0);
  EXPECT_EQ(s.routes, 128 * (56 + 16) + 18 * 7 * 8 + 2 * 3 + 19 * 18);
  EXPECT_EQ(s.zones, 1 + 19 * 2 + 128);
}

TEST(SimGridXml, RefusesRailClustersTooLargeForAFullZone) {
  const Cluster c =
      load_cluster(ConfigNode::load_string("servers:\n"
                                           "  - count: 40\n"
                                           "    gpu: H100-SXM-80GB\n"
                                           "    gpus_per_server: 8\n"
                                           "    intra: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}\n"
                                           "    nic: {bandwidth: 400 Gbps, latency: 2 us}\n"
                                           "network: {kind: rail-optimized, latency: 1 us}\n",
                                           "rails.yaml"));
  std::ostringstream out;
  EXPECT_THROW(write_simgrid_platform(out, c), ModelError);
}

}  // namespace
}  // namespace dejavu::platforms
