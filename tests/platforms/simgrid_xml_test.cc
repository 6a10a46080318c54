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

TEST(SimGridXml, SimGridLoadsTheExportAndRoutesAsDejavuDoes) {
  const Cluster c = load_cluster_file(preset("mixed-a100-h100-2x8"));
  const auto path = std::filesystem::temp_directory_path() / ("dejavu-export-" + std::to_string(::getpid()) + ".xml");
  {
    std::ofstream out(path);
    write_simgrid_platform(out, c);
  }
  // SimGrid runs once per process: read the platform back in a child.
  const sim::Result seen = sim::run_in_child([&] {
    int argc = 2;
    char a0[] = "test", a1[] = "--log=root.thresh:critical";
    char* argv[] = {a0, a1, nullptr};
    simgrid::s4u::Engine e(&argc, argv);
    e.load_platform(path.string());
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    simgrid::s4u::Host::by_name("server0/gpu3")->route_to(simgrid::s4u::Host::by_name("server1/gpu5"), links, &latency);
    sim::Result r;
    r.makespan_s = latency;
    r.activities = e.get_host_count();
    for (auto* l : links) r.link_bytes.push_back(l->get_bandwidth());
    return r;
  });
  std::filesystem::remove(path);
  EXPECT_EQ(seen.activities, 16u);
  const auto cost = c.network.path_cost(c.gpus[3].host, c.gpus[13].host);
  EXPECT_NEAR(seen.makespan_s, cost.latency_s, 1e-15);
  ASSERT_EQ(seen.link_bytes.size(), c.network.route(c.gpus[3].host, c.gpus[13].host).size());
  EXPECT_DOUBLE_EQ(*std::min_element(seen.link_bytes.begin(), seen.link_bytes.end()), cost.bottleneck_Bps);
}

TEST(SimGridXml, RefusesClustersTooLargeForAFullZone) {
  const Cluster c = load_cluster_file(preset("dgx-a100-128x8"));
  std::ostringstream out;
  EXPECT_THROW(write_simgrid_platform(out, c), ModelError);
}

}  // namespace
}  // namespace dejavu::platforms
