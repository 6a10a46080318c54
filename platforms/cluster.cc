#include "platforms/cluster.h"

#include <algorithm>

#include "platforms/nic_protocol.h"
#include "sim/limits.h"

namespace dejavu::platforms {

double GpuSlot::runtime_bytes() const {
  double total = 0;
  for (const sim::MemoryPart& part : runtime) total += part.bytes;
  return total;
}

int Cluster::server_count() const {
  int n = 0;
  for (const auto& g : groups) n += g.count;
  return n;
}

int Cluster::servers_per_unit() const {
  if (fabric.kind == "rail-optimized" && fabric.servers_per_leaf <= 0) return std::max(1, server_count());
  return std::max(1, fabric.servers_per_leaf);
}

namespace {

// The NIC attachment points of one server, in NIC order: each GPU (per_gpu) or the
// server's switch / root complex (shared NIC); and each GPU's links to its NIC's port.
struct ServerNodes {
  std::string name;
  std::vector<int> nic_ports;
  const ServerGroup* group = nullptr;
  std::vector<int> hosts;
  std::vector<std::vector<sim::Hop>> to_port;  // per GPU, in local order
  int cpu = -1;                                // the host side's node (host.pcie given)
  std::vector<sim::Hop> cpu_to_port;           // its way to its first NIC's port
};

// The host side on the network (host.pcie given): a CPU node, and each GPU's PCIe. With a
// NIC per GPU, GPU i reaches its NIC through its own PCIe switch, whose link to the GPU
// (host.pcie per direction) carries both the NIC's traffic and copies to and from CPU
// memory; the CPU joins every such switch. A shared NIC hangs off the server's switch or
// root complex, which the CPU then joins by one PCIe link.
void attach_host(sim::Network& net, ServerNodes& s, const ServerGroup& g, int i, int host) {
  const std::string gname = s.name + "/gpu" + std::to_string(i);
  if (!g.nic.per_gpu) {
    s.to_port.emplace_back();
    return;
  }
  const int port = net.add_switch(gname + "/pcie-switch");
  const int pcie = net.add_link(gname + "/pcie", host, port, g.host.pcie_Bps, 0);
  const int up = net.add_link(gname + "/pcie-switch/cpu", s.cpu, port, g.host.pcie_Bps, 0);
  s.nic_ports.push_back(port);
  s.to_port.push_back({{pcie, true}});
  if (i == 0) s.cpu_to_port = {{up, true}};
}

std::vector<sim::MemoryPart> runtime_memory(const ServerGroup& g, const GpuSpec& spec) {
  if (g.reserved_bytes >= 0) return {{"runtime (reserved_memory)", g.reserved_bytes}};
  return {{"CUDA context and kernels", spec.cuda_context_bytes}, {"NCCL buffers", spec.nccl_buffers_bytes}};
}

ServerNodes build_server(Cluster& c, int group, int server) {
  const ServerGroup& g = c.groups[group];
  sim::Network& net = c.network;
  const GpuSpec& spec = gpu_spec(g.gpu);
  ServerNodes s;
  s.name = "server" + std::to_string(server);
  s.group = &g;
  const bool pcie = g.intra.kind == "pcie";
  const int per_switch = pcie && g.intra.gpus_per_switch > 0 ? g.intra.gpus_per_switch : g.gpus_per_server;
  const int root = pcie && per_switch < g.gpus_per_server ? net.add_switch(s.name + "/root-complex") : -1;
  int sw = -1, sw_uplink = -1;
  const bool host_side = g.host.pcie_Bps > 0;
  if (host_side) s.cpu = net.add_host(s.name + "/cpu", server, 0);
  for (int i = 0; i < g.gpus_per_server; ++i) {
    if (i % per_switch == 0) {
      const std::string swname = s.name + "/" + g.intra.kind + (root >= 0 ? std::to_string(i / per_switch) : "");
      sw = net.add_switch(swname);
      if (g.intra.nvls_Bps > 0) net.set_in_switch_reduction(sw, g.intra.nvls_Bps, g.intra.nvls_latency_s, per_switch);
      if (root >= 0) {
        const double up =
            (g.intra.switch_uplink_Bps > 0 ? g.intra.switch_uplink_Bps : g.intra.bandwidth_Bps) * g.intra.efficiency;
        sw_uplink = net.add_link(swname + "/uplink", sw, root, up, 0);
      }
    }
    const std::string gname = s.name + "/gpu" + std::to_string(i);
    const int host = net.add_host(gname, server, g.step_latency_s);
    const int intra = net.add_link(gname + "/" + g.intra.kind, host, sw, g.intra.bandwidth_Bps * g.intra.efficiency,
                                   g.intra.latency_s / 2);
    c.gpus.push_back(GpuSlot{host, server, i, &spec, runtime_memory(g, spec), group, s.cpu});
    s.hosts.push_back(host);
    if (host_side && g.nic.per_gpu) {
      attach_host(net, s, g, i, host);
    } else if (g.nic.per_gpu) {
      s.nic_ports.push_back(host);
      s.to_port.emplace_back();
    } else {
      s.to_port.push_back({{intra, true}});
      if (sw_uplink >= 0) s.to_port.back().push_back({sw_uplink, true});
    }
  }
  if (!g.nic.per_gpu) s.nic_ports.push_back(root >= 0 ? root : sw);
  if (host_side && !g.nic.per_gpu)
    s.cpu_to_port = {{net.add_link(s.name + "/cpu/pcie", s.cpu, s.nic_ports[0], g.host.pcie_Bps, 0), true}};
  return s;
}

// A fat-tree server's NICs (`add_nic(port)` joins one to its leaf and returns the link),
// and each GPU's path up to the leaf, in the last leaf of `nesting`.
template <class AddNic>
void declare_server(const ServerNodes& s, sim::Hierarchy& nesting, AddNic&& add_nic) {
  std::vector<int> nics;
  for (size_t p = 0; p < s.nic_ports.size(); ++p) nics.push_back(add_nic(p));
  sim::Hierarchy::Leaf& leaf = nesting.leaves.back();
  for (size_t i = 0; i < s.hosts.size(); ++i) {
    std::vector<sim::Hop>& up = nesting.up[static_cast<size_t>(s.hosts[i])];
    up = s.to_port[i];
    up.push_back({s.group->nic.per_gpu ? nics[i] : nics[0], true});
    leaf.hosts.push_back(s.hosts[i]);
  }
  if (s.cpu >= 0) {
    std::vector<sim::Hop>& up = nesting.up[static_cast<size_t>(s.cpu)];
    up = s.cpu_to_port;
    up.push_back({nics[0], true});
    leaf.hosts.push_back(s.cpu);
  }
}

// Rail leaves: NIC i of a server joins rail i's switch; with `servers_per_leaf` (a scalable
// unit) each unit has its own switch per rail, and a rail's switches meet at its plane's
// spine (a multi-plane fabric), the planes at the top spine.
template <class AddNic>
void rail_leaves(sim::Network& net, const std::vector<ServerNodes>& servers, const FabricSpec& f,
                 std::vector<int>& leaf, std::vector<double>& leaf_nic_bw, std::vector<int>& parent, int spine,
                 AddNic&& nic) {
  size_t rails = 0;
  for (const auto& s : servers) rails = std::max(rails, s.nic_ports.size());
  const size_t unit = f.servers_per_leaf > 0 ? static_cast<size_t>(f.servers_per_leaf) : servers.size();
  const size_t units = (servers.size() + unit - 1) / unit;
  for (size_t r = 0; r < rails; ++r) {
    const int plane = units > 1 ? net.add_switch("plane" + std::to_string(r)) : spine;
    for (size_t u = 0; u < units; ++u) {
      leaf.push_back(net.add_switch("rail" + std::to_string(r) + (units > 1 ? "/unit" + std::to_string(u) : "")));
      parent.push_back(plane);
    }
  }
  leaf_nic_bw.assign(leaf.size(), 0);
  for (size_t i = 0; i < servers.size(); ++i)
    for (size_t p = 0; p < servers[i].nic_ports.size(); ++p) nic(servers[i], p, p * units + i / unit);
}

}  // namespace

void build_network(Cluster& c) {
  sim::Network& net = c.network;
  c.gpus.clear();
  std::vector<ServerNodes> servers;
  int server = 0;
  for (size_t g = 0; g < c.groups.size(); ++g)
    for (int k = 0; k < c.groups[g].count; ++k) servers.push_back(build_server(c, static_cast<int>(g), server++));

  const int spine = net.add_switch("spine");
  const FabricSpec& f = c.fabric;
  // Each NIC joins its leaf (or rail) switch; each leaf reaches the spine over an uplink
  // of its NICs' total bandwidth divided by the oversubscription.
  std::vector<int> leaf;
  std::vector<double> leaf_nic_bw;
  auto nic = [&](const ServerNodes& s, size_t port, size_t to_leaf) {
    const NicSpec& n = s.group->nic;
    const std::string name = s.name + (s.group->nic.per_gpu ? "/gpu" + std::to_string(port) : "") + "/nic";
    leaf_nic_bw.at(to_leaf) += n.bandwidth_Bps * n.efficiency;
    return net.add_link(name, s.nic_ports[port], leaf.at(to_leaf), n.bandwidth_Bps * n.efficiency, n.latency_s / 2);
  };
  // Fat-trees declare how hosts nest (sim::Hierarchy: SimGrid routes them by zones); rails
  // do not: a server's GPUs sit on different rails but reach each other over NVLink.
  sim::Hierarchy nesting;
  nesting.up.resize(static_cast<size_t>(net.node_count()));
  std::vector<int> parent;  // the switch each leaf's uplink goes to
  if (f.kind == "rail-optimized") {
    rail_leaves(net, servers, f, leaf, leaf_nic_bw, parent, spine, nic);
  } else {
    const int per_leaf = std::max(1, f.servers_per_leaf);
    for (size_t i = 0; i < servers.size(); ++i) {
      if (i % per_leaf == 0) {
        leaf.push_back(
            net.add_switch(per_leaf == 1 ? servers[i].name + "/leaf" : "leaf" + std::to_string(i / per_leaf)));
        leaf_nic_bw.push_back(0);
        parent.push_back(spine);
      }
      if (i % per_leaf == 0) nesting.leaves.emplace_back();
      declare_server(servers[i], nesting, [&](size_t p) { return nic(servers[i], p, leaf.size() - 1); });
    }
  }
  std::map<int, double> above;  // a plane's uplinks, for its own to the spine
  for (size_t l = 0; l < leaf.size(); ++l) {
    const double bw = leaf_nic_bw[l] / f.oversubscription;
    const int up = net.add_link(net.node(leaf[l]).name + "/uplink", leaf[l], parent[l], bw, f.latency_s / 2);
    if (l < nesting.leaves.size()) nesting.leaves[l].uplink = up;
    if (parent[l] != spine) above[parent[l]] += bw;
  }
  for (const auto& [plane, bw] : above)
    net.add_link(net.node(plane).name + "/uplink", plane, spine, bw / f.oversubscription, f.latency_s / 2);
  net.check_hosts_reach(spine);
  if (!nesting.leaves.empty()) net.set_hierarchy(std::move(nesting));
}

namespace {

int positive_int(const ConfigNode& n, const char* key, long long fallback, bool required, long long max) {
  if (!required && !n.has(key)) return static_cast<int>(fallback);
  return static_cast<int>(n.child(key).as_int(1, max));
}

double efficiency(const ConfigNode& n) { return n.get_double("efficiency", 1, 1e-3, 1); }

double positive_rate(const ConfigNode& n, const char* key) {
  return n.get_quantity(key, units::Dimension::Rate, limits::kMinBandwidth, limits::kMaxBandwidth);
}

double latency(const ConfigNode& n, const char* key) {
  return n.get_quantity(key, units::Dimension::Time, 0, limits::kMaxLatency);
}

IntraSpec load_intra(const ConfigNode& intra, int gpus_per_server) {
  intra.expect_map({"kind", "bandwidth", "latency", "efficiency", "gpus_per_switch", "switch_uplink", "nvls"});
  IntraSpec out;
  out.efficiency = efficiency(intra);
  out.kind = intra.child("kind").as_choice({"nvswitch", "xgmi", "pcie"});
  out.bandwidth_Bps = positive_rate(intra, "bandwidth");
  out.latency_s = latency(intra, "latency");
  if (out.kind == "pcie") {
    out.gpus_per_switch = positive_int(intra, "gpus_per_switch", gpus_per_server, false, limits::kMaxGpusPerServer);
    if (intra.has("switch_uplink")) out.switch_uplink_Bps = positive_rate(intra, "switch_uplink");
  } else {
    for (const char* key : {"gpus_per_switch", "switch_uplink"})
      if (intra.has(key)) intra.child(key).fail("only for kind: pcie (an NVSwitch joins all GPUs)");
  }
  if (intra.has("nvls")) {
    const ConfigNode nvls = intra.child("nvls");
    if (out.kind != "nvswitch") nvls.fail("only for kind: nvswitch (the switch reduces: NVLink SHARP)");
    nvls.expect_map({"bandwidth", "latency"});
    out.nvls_Bps = positive_rate(nvls, "bandwidth");
    out.nvls_latency_s = latency(nvls, "latency");
  }
  return out;
}

ServerGroup load_group(const ConfigNode& n) {
  n.expect_map({"count", "gpu", "gpus_per_server", "intra", "nic", "step_latency", "reserved_memory", "host"});
  ServerGroup g;
  g.count = positive_int(n, "count", 1, false, limits::kMaxGpus);
  const ConfigNode gpu = n.child("gpu");
  g.gpu = gpu.as_string();
  if (!has_gpu(g.gpu)) gpu.fail("unknown GPU type \"" + g.gpu + "\"; valid: " + gpu_names());
  g.gpus_per_server = positive_int(n, "gpus_per_server", 8, false, limits::kMaxGpusPerServer);
  g.intra = load_intra(n.child("intra"), g.gpus_per_server);
  const ConfigNode nic = n.child("nic");
  nic.expect_map({"bandwidth", "latency", "per_gpu", "efficiency", "protocol", "mtu"});
  g.nic.efficiency = efficiency(nic);
  if (nic.has("protocol")) {
    g.nic.protocol = nic.child("protocol").as_choice(nic_protocols());
    if (nic.has("mtu")) {
      const ConfigNode mtu = nic.child("mtu");
      const long long v = mtu.as_int(256, 4096);
      if ((v & (v - 1)) != 0)
        mtu.fail("RDMA's payload MTU is 256, 512, 1024, 2048 or 4096 bytes, got " + mtu.as_string());
      g.nic.mtu = static_cast<double>(v);
    }
    g.nic.efficiency *= framing_efficiency(g.nic.protocol, g.nic.mtu);
  } else if (nic.has("mtu")) {
    nic.child("mtu").fail("the payload of a protocol's packets; give protocol: infiniband or roce with it");
  }
  g.nic.bandwidth_Bps = positive_rate(nic, "bandwidth");
  g.nic.latency_s = latency(nic, "latency");
  g.nic.per_gpu = nic.get_bool("per_gpu", true);
  g.step_latency_s = n.get_quantity("step_latency", units::Dimension::Time, 0, 0, limits::kMaxLatency);
  if (n.has("reserved_memory"))
    g.reserved_bytes = n.get_quantity("reserved_memory", units::Dimension::Bytes, 0, 0, limits::kMaxMemory);
  if (n.has("host")) {
    const ConfigNode h = n.child("host");
    h.expect_map({"memory", "memory_bandwidth", "pcie", "nvme", "nvme_bandwidth"});
    const auto bytes = [&](const char* key) {
      return h.has(key) ? h.get_quantity(key, units::Dimension::Bytes, 0, 1, limits::kMaxMemory) : 0.0;
    };
    const auto rate = [&](const char* key) { return h.has(key) ? positive_rate(h, key) : 0.0; };
    g.host = {bytes("memory"), rate("memory_bandwidth"), rate("pcie"), bytes("nvme"), rate("nvme_bandwidth")};
  }
  return g;
}

}  // namespace

Cluster load_cluster(const ConfigNode& root) {
  root.expect_map({"name", "servers", "network", "storage"});
  Cluster c;
  c.name = root.get_string("name", root.file_stem());
  if (root.has("storage")) {
    const ConfigNode st = root.child("storage");
    st.expect_map({"bandwidth"});
    c.storage_bandwidth_Bps = positive_rate(st, "bandwidth");
  }
  const ConfigNode servers = root.child("servers");
  double gpus = 0;
  for (const ConfigNode& g : servers.items()) {
    c.groups.push_back(load_group(g));
    gpus += static_cast<double>(c.groups.back().count) * c.groups.back().gpus_per_server;
    if (gpus > limits::kMaxGpus)
      g.fail("the platform would have " + std::to_string(static_cast<long long>(gpus)) + " GPUs; at most " +
             std::to_string(limits::kMaxGpus));
  }
  if (c.groups.empty()) servers.fail("expected at least one server group");
  const ConfigNode net = root.child("network");
  net.expect_map({"kind", "latency", "oversubscription", "servers_per_leaf"});
  c.fabric.kind =
      net.has("kind") ? net.child("kind").as_choice({"fat-tree", "leaf-spine", "rail-optimized"}) : "fat-tree";
  c.fabric.servers_per_leaf = positive_int(net, "servers_per_leaf", 1, false, limits::kMaxGpus);
  if (c.fabric.kind == "rail-optimized") {
    // A rail switch per unit of servers_per_leaf servers (multi-plane); without, one per rail.
    if (!net.has("servers_per_leaf")) c.fabric.servers_per_leaf = 0;
    for (size_t i = 0; i < c.groups.size(); ++i)
      if (!c.groups[i].nic.per_gpu)
        servers.items()[i].child("nic").fail("rail-optimized needs one NIC per GPU (per_gpu: true)");
  }
  c.fabric.latency_s = latency(net, "latency");
  c.fabric.oversubscription = net.get_double("oversubscription", 1, 1, limits::kMaxFactor);  // 1: non-blocking
  build_network(c);
  return c;
}

Cluster load_cluster_file(const std::string& path) { return load_cluster(ConfigNode::load_file(path)); }

}  // namespace dejavu::platforms
