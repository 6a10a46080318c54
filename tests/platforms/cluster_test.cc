#include "platforms/cluster.h"

#include "platforms/gpu_order.h"

#include <gtest/gtest.h>

#include "sim/link_sharing.h"

namespace dejavu::platforms {

std::string preset(const std::string& name) {
  return std::string(DEJAVU_SOURCE_DIR) + "/platforms/presets/" + name + ".yaml";
}

TEST(Cluster, RoutesInsideAndAcrossServersTakeTheYamlLatenciesAndBandwidths) {
  const Cluster c = load_cluster_file(preset("dgx-a100-4x8"));
  ASSERT_EQ(c.gpu_count(), 32);
  const auto inside = c.network.path_cost(c.gpus[0].host, c.gpus[7].host);
  EXPECT_DOUBLE_EQ(inside.latency_s, 1e-6);
  EXPECT_DOUBLE_EQ(inside.bottleneck_Bps, 300e9 * 0.759);  // bandwidth x efficiency
  const auto across = c.network.path_cost(c.gpus[0].host, c.gpus[8].host);
  EXPECT_DOUBLE_EQ(across.latency_s, 2e-6 + 1e-6);  // nic + network
  EXPECT_DOUBLE_EQ(across.bottleneck_Bps, 25e9);    // 200 Gbps
}

// Two servers of one GPU each, a 400 Gb/s NIC speaking `protocol` (and `mtu`).
Cluster two_servers(const std::string& nic_extra) {
  return load_cluster(
      ConfigNode::load_string("servers:\n  - count: 2\n    gpu: H100-SXM-80GB\n    gpus_per_server: 1\n"
                              "    intra: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}\n"
                              "    nic: {bandwidth: 400 Gbps, latency: 2 us" +
                                  nic_extra + "}\nnetwork: {kind: fat-tree, latency: 1 us}\n",
                              "p.yaml"));
}

TEST(Cluster, NicProtocolsCarryTheirHeadersInEveryPacket) {
  // 50 GB/s of wire; 4096-byte payloads with InfiniBand's 26 bytes of headers (LRH, BTH,
  // ICRC, VCRC), RoCEv2's 82 (preamble, Ethernet, IPv4, UDP, BTH, ICRC, FCS, gap).
  auto rate = [](const Cluster& c) { return c.network.path_cost(c.gpus[0].host, c.gpus[1].host).bottleneck_Bps; };
  EXPECT_DOUBLE_EQ(rate(two_servers("")), 50e9);
  EXPECT_DOUBLE_EQ(rate(two_servers(", protocol: infiniband")), 50e9 * 4096 / 4122);
  EXPECT_DOUBLE_EQ(rate(two_servers(", protocol: roce")), 50e9 * 4096 / 4178);
  EXPECT_DOUBLE_EQ(rate(two_servers(", protocol: roce, mtu: 1024, efficiency: 0.9")), 50e9 * 0.9 * 1024 / 1106);
  EXPECT_THROW(two_servers(", protocol: ethernet"), ConfigError);
  EXPECT_THROW(two_servers(", protocol: roce, mtu: 9000"), ConfigError);
  EXPECT_THROW(two_servers(", protocol: roce, mtu: 1000"), ConfigError);
  EXPECT_THROW(two_servers(", mtu: 4096"), ConfigError);
}

TEST(Cluster, CopiesToCpuMemoryShareTheGpusPcieLinkWithItsNic) {
  // A GPU's NIC hangs off its PCIe switch (40 GB/s a direction to the GPU), as does the CPU:
  // a 1 GB copy to CPU memory and a 1 GB send to the other server, at once, share the GPU's
  // PCIe link (20 GB/s each, under the NIC's 50): both end at 2 GB / 40 GB/s = 50 ms;
  // alone each takes 25 ms.
  const Cluster c = two_servers(", per_gpu: true}\n    host: {memory: 1 TB, memory_bandwidth: 400 GB/s, pcie: 40 GB/s");
  const auto& net = c.network;
  const int gpu = c.gpus[0].host, cpu = c.gpus[0].cpu, other = c.gpus[1].host;
  ASSERT_GE(cpu, 0);
  EXPECT_FALSE(net.node(cpu).name.find("cpu") == std::string::npos);
  EXPECT_DOUBLE_EQ(net.path_cost(gpu, cpu).bottleneck_Bps, 40e9);
  auto flow = [&](int a, int b) {
    sim::Flow f;
    for (const sim::Hop& h : net.route(a, b)) f.links.push_back(2 * h.link + (h.forward ? 0 : 1));
    f.bytes = 1e9;
    return f;
  };
  EXPECT_NEAR(sim::fluid_drain_s(net, {flow(gpu, cpu)}), 0.025, 1e-12);
  EXPECT_NEAR(sim::fluid_drain_s(net, {flow(gpu, other)}), 0.025, 1e-12);
  EXPECT_NEAR(sim::fluid_drain_s(net, {flow(gpu, cpu), flow(gpu, other)}), 0.05, 1e-12);
  // Without a host side the NIC hangs off the GPU and there is no CPU node.
  EXPECT_EQ(two_servers("").gpus[0].cpu, -1);
}

TEST(Cluster, HeterogeneousGroupsKeepTheirGpuTypes) {
  const Cluster c = load_cluster_file(preset("mixed-a100-h100-2x8"));
  ASSERT_EQ(c.gpu_count(), 16);
  EXPECT_EQ(c.gpus[0].spec->name, "A100-SXM-80GB");
  EXPECT_EQ(c.gpus[15].spec->name, "H100-SXM-80GB");
  EXPECT_EQ(c.server_count(), 2);
  // 2:1 oversubscription: the server uplink carries half of its NICs' total.
  int found = 0;
  for (const auto& l : c.network.links())
    if (l.name == "server1/leaf/uplink") {
      EXPECT_DOUBLE_EQ(l.bandwidth_Bps, 8 * 50e9 / 2);
      ++found;
    }
  EXPECT_EQ(found, 1);
}

TEST(Cluster, OrderedByGpuPutsTheListedTypeFirst) {
  const Cluster c = load_cluster_file(preset("mixed-a100-h100-2x8"));
  EXPECT_EQ(gpu_types(c), (std::vector<std::string>{"A100-SXM-80GB", "H100-SXM-80GB"}));
  const Cluster h = ordered_by_gpu(c, {"H100-SXM-80GB"});
  ASSERT_EQ(h.gpu_count(), 16);
  // Ranks 0-7 are the H100 server's GPUs now, named server0; its 400 Gb/s NICs moved with it.
  EXPECT_EQ(h.gpus[0].spec->name, "H100-SXM-80GB");
  EXPECT_EQ(h.gpus[8].spec->name, "A100-SXM-80GB");
  EXPECT_EQ(h.network.node(h.gpus[0].host).name, "server0/gpu0");
  EXPECT_EQ(h.group_of(0).nic.bandwidth_Bps, 50e9);
  EXPECT_EQ(h.group_of(8).nic.bandwidth_Bps, 25e9);
  // An empty list, or the order the file already has, keeps the cluster as it is.
  for (const std::vector<std::string>& same :
       {std::vector<std::string>{}, std::vector<std::string>{"A100-SXM-80GB", "H100-SXM-80GB"}}) {
    const Cluster k = ordered_by_gpu(c, same);
    EXPECT_EQ(k.gpus[0].spec->name, "A100-SXM-80GB");
    EXPECT_EQ(k.network.node_count(), c.network.node_count());
  }
  // Back again: the same cluster as loaded, node for node.
  const Cluster back = ordered_by_gpu(h, {"A100-SXM-80GB"});
  ASSERT_EQ(back.network.node_count(), c.network.node_count());
  for (int n = 0; n < c.network.node_count(); ++n) EXPECT_EQ(back.network.node(n).name, c.network.node(n).name);
}

TEST(Cluster, SharedNicServersRouteThroughTheServerSwitch) {
  const Cluster c = load_cluster_file(preset("pcie-l4-2x4"));
  const auto across = c.network.path_cost(c.gpus[0].host, c.gpus[4].host);
  // Both servers hang off one leaf: pcie/2 + nic/2 on each side, no spine.
  EXPECT_NEAR(across.latency_s, 3e-6 + 2e-6, 1e-18);
  EXPECT_DOUBLE_EQ(across.bottleneck_Bps, 12.5e9);
}

Cluster from_yaml(const std::string& text) { return load_cluster(ConfigNode::load_string(text, "inline.yaml")); }

TEST(Cluster, LeafSpineKeepsSameLeafTrafficOffTheSpine) {
  const Cluster c = from_yaml(R"(
servers:
  - count: 4
    gpu: H100-SXM-80GB
    gpus_per_server: 2
    intra: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}
    nic: {bandwidth: 400 Gbps, latency: 2 us}
network: {kind: leaf-spine, servers_per_leaf: 2, latency: 3 us, oversubscription: 4}
)");
  const auto same_leaf = c.network.path_cost(c.gpus[0].host, c.gpus[2].host);
  EXPECT_DOUBLE_EQ(same_leaf.latency_s, 2e-6);
  EXPECT_DOUBLE_EQ(same_leaf.bottleneck_Bps, 50e9);
  const auto cross = c.network.path_cost(c.gpus[0].host, c.gpus[4].host);
  EXPECT_DOUBLE_EQ(cross.latency_s, 2e-6 + 3e-6);
  // A leaf's uplink: 4 NICs of 50 GB/s over 4:1 = 50 GB/s, shared by all its servers.
  EXPECT_DOUBLE_EQ(cross.bottleneck_Bps, 50e9);
}

TEST(Cluster, XgmiServersJoinEachGpusLinksAsOnePort) {
  // 8 MI300X: a route between two GPUs crosses two 448 GB/s ports of 1/2 us each, as the
  // same server built with an NVSwitch would (the port is the GPU's seven 64 GB/s links).
  const std::string body =
      "servers:\n  - count: 1\n    gpu: MI300X-192GB\n    gpus_per_server: 8\n"
      "    intra: {kind: KIND, bandwidth: 448 GB/s, latency: 1 us}\n"
      "    nic: {bandwidth: 400 Gbps, latency: 2 us}\nnetwork: {kind: fat-tree, latency: 1 us}\n";
  std::string xgmi = body, nvswitch = body;
  xgmi.replace(xgmi.find("KIND"), 4, "xgmi");
  nvswitch.replace(nvswitch.find("KIND"), 4, "nvswitch");
  const Cluster a = from_yaml(xgmi), b = from_yaml(nvswitch);
  const sim::PathCost pa = a.network.path_cost(a.gpus[0].host, a.gpus[5].host);
  EXPECT_DOUBLE_EQ(pa.bottleneck_Bps, 448e9);
  EXPECT_DOUBLE_EQ(pa.latency_s, 1e-6);
  EXPECT_EQ(a.network.link_count(), b.network.link_count());
  EXPECT_EQ(a.groups[0].intra.kind, "xgmi");
}

TEST(Cluster, MultiPlaneRailsMeetAtTheirPlaneThenTheTop) {
  // 4 servers of 2 GPUs, units of 2 servers: rail r of each unit its own switch, the two
  // switches of rail r under plane r, the planes under the top spine; 4:1 at each tier.
  const Cluster c = from_yaml(R"(
servers:
  - count: 4
    gpu: H100-SXM-80GB
    gpus_per_server: 2
    intra: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}
    nic: {bandwidth: 400 Gbps, latency: 2 us}
network: {kind: rail-optimized, servers_per_leaf: 2, latency: 3 us, oversubscription: 4}
)");
  auto cost = [&](int a, int b) { return c.network.path_cost(c.gpus[a].host, c.gpus[b].host); };
  EXPECT_DOUBLE_EQ(cost(0, 2).latency_s, 2e-6);  // rail 0, same unit: the rail switch
  EXPECT_DOUBLE_EQ(cost(0, 2).bottleneck_Bps, 50e9);
  EXPECT_DOUBLE_EQ(cost(0, 4).latency_s, 2e-6 + 3e-6);  // rail 0, other unit: plane 0
  EXPECT_DOUBLE_EQ(cost(0, 4).bottleneck_Bps, 2 * 50e9 / 4);
  EXPECT_DOUBLE_EQ(cost(0, 5).latency_s, 2e-6 + 2 * 3e-6);  // rail 0 to rail 1: the top
  EXPECT_DOUBLE_EQ(cost(0, 5).bottleneck_Bps, 2 * (2 * 50e9 / 4) / 4);
  EXPECT_DOUBLE_EQ(cost(0, 1).latency_s, 1e-6);  // inside a server: NVLink
}

TEST(Cluster, RailOptimizedJoinsSameIndexNicsOnOneRail) {
  const Cluster c = from_yaml(R"(
servers:
  - count: 2
    gpu: H100-SXM-80GB
    gpus_per_server: 4
    intra: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}
    nic: {bandwidth: 400 Gbps, latency: 2 us}
network: {kind: rail-optimized, latency: 3 us}
)");
  // GPU 1 of server 0 to GPU 1 of server 1: one rail, no spine.
  EXPECT_DOUBLE_EQ(c.network.path_cost(c.gpus[1].host, c.gpus[5].host).latency_s, 2e-6);
  // GPU 1 to GPU 2 of the other server: rail 1, spine, rail 2.
  EXPECT_DOUBLE_EQ(c.network.path_cost(c.gpus[1].host, c.gpus[6].host).latency_s, 5e-6);
}

TEST(Cluster, PcieSwitchesShareTheirUplinkToTheRootComplex) {
  const Cluster c = from_yaml(R"(
servers:
  - count: 1
    gpu: L4
    gpus_per_server: 4
    intra: {kind: pcie, bandwidth: 32 GB/s, latency: 2 us, gpus_per_switch: 2, switch_uplink: 16 GB/s}
    nic: {bandwidth: 100 Gbps, latency: 2 us, per_gpu: false}
network: {kind: fat-tree, latency: 1 us}
)");
  EXPECT_DOUBLE_EQ(c.network.path_cost(c.gpus[0].host, c.gpus[1].host).bottleneck_Bps, 32e9);
  const auto across = c.network.path_cost(c.gpus[0].host, c.gpus[2].host);
  EXPECT_DOUBLE_EQ(across.bottleneck_Bps, 16e9);
  EXPECT_DOUBLE_EQ(across.latency_s, 2e-6);
}

TEST(Cluster, RailOptimizedNeedsANicPerGpu) {
  try {
    from_yaml(R"(
servers:
  - count: 2
    gpu: L4
    gpus_per_server: 4
    intra: {kind: pcie, bandwidth: 32 GB/s, latency: 2 us}
    nic: {bandwidth: 100 Gbps, latency: 2 us, per_gpu: false}
network: {kind: rail-optimized, latency: 1 us}
)");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("inline.yaml:7:10: servers[0].nic: rail-optimized needs one NIC per GPU"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace dejavu::platforms
