#include "platforms/cluster.h"

#include <gtest/gtest.h>

namespace dejavu::platforms {

std::string preset(const std::string& name) {
  return std::string(DEJAVU_SOURCE_DIR) + "/platforms/presets/" + name + ".yaml";
}

TEST(Cluster, RoutesInsideAndAcrossServersTakeTheYamlLatencies) {
  const Cluster c = load_cluster_file(preset("dgx-a100-4x8"));
  ASSERT_EQ(c.gpu_count(), 32);
  const auto inside = c.network.path_cost(c.gpus[0].host, c.gpus[7].host);
  EXPECT_DOUBLE_EQ(inside.latency_s, 1e-6);
  EXPECT_DOUBLE_EQ(inside.bottleneck_Bps, 300e9);
  const auto across = c.network.path_cost(c.gpus[0].host, c.gpus[8].host);
  EXPECT_DOUBLE_EQ(across.latency_s, 2e-6 + 1e-6);  // nic + network
  EXPECT_DOUBLE_EQ(across.bottleneck_Bps, 25e9);    // 200 Gbps
}

TEST(Cluster, HeterogeneousGroupsKeepTheirGpuTypes) {
  const Cluster c = load_cluster_file(preset("mixed-a100-h100-2x8"));
  ASSERT_EQ(c.gpu_count(), 16);
  EXPECT_EQ(c.gpus[0].spec->name, "A100-SXM-80GB");
  EXPECT_EQ(c.gpus[15].spec->name, "H100-SXM-80GB");
  EXPECT_EQ(c.server_count(), 2);
  // 2:1 oversubscription: the server uplink carries half of its NICs' total.
  for (const auto& l : c.network.links())
    if (l.name == "server1/uplink") EXPECT_DOUBLE_EQ(l.bandwidth_Bps, 8 * 50e9 / 2);
}

TEST(Cluster, SharedNicServersRouteThroughTheServerSwitch) {
  const Cluster c = load_cluster_file(preset("pcie-l4-2x4"));
  const auto across = c.network.path_cost(c.gpus[0].host, c.gpus[4].host);
  // pcie/2 + nic/2 + uplink/2 on each side: pcie + nic + network latency.
  EXPECT_NEAR(across.latency_s, 3e-6 + 2e-6 + 1e-6, 1e-18);
  EXPECT_DOUBLE_EQ(across.bottleneck_Bps, 12.5e9);
}

}  // namespace dejavu::platforms
