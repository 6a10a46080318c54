#include "platforms/cluster.h"

namespace dejavu::platforms {

int Cluster::server_count() const {
  int n = 0;
  for (const auto& g : groups) n += g.count;
  return n;
}

void build_network(Cluster& c) {
  sim::Network& net = c.network;
  c.gpus.clear();
  const int core = net.add_switch("core");
  int server = 0;
  for (const ServerGroup& g : c.groups) {
    const GpuSpec& spec = gpu_spec(g.gpu);
    for (int k = 0; k < g.count; ++k, ++server) {
      const std::string sname = "server" + std::to_string(server);
      const int sw = net.add_switch(sname + "/" + g.intra.kind);
      const int leaf = net.add_switch(sname + "/nic-leaf");
      const int nics = g.nic.per_gpu ? g.gpus_per_server : 1;
      const double uplink = nics * g.nic.bandwidth_Bps / c.fabric.oversubscription;
      net.add_link(sname + "/uplink", leaf, core, uplink, c.fabric.latency_s / 2);
      if (!g.nic.per_gpu) net.add_link(sname + "/nic", sw, leaf, g.nic.bandwidth_Bps, g.nic.latency_s / 2);
      for (int i = 0; i < g.gpus_per_server; ++i) {
        const std::string gname = sname + "/gpu" + std::to_string(i);
        const int host = net.add_host(gname);
        net.add_link(gname + "/" + g.intra.kind, host, sw, g.intra.bandwidth_Bps, g.intra.latency_s / 2);
        if (g.nic.per_gpu)
          net.add_link(gname + "/nic", host, leaf, g.nic.bandwidth_Bps, g.nic.latency_s / 2);
        c.gpus.push_back(GpuSlot{host, server, i, &spec});
      }
    }
  }
}

namespace {

int positive_int(const ConfigNode& n, const char* key, long long fallback, bool required) {
  if (!required && !n.has(key)) return static_cast<int>(fallback);
  const ConfigNode v = n.child(key);
  const long long x = v.as_int();
  if (x <= 0 || x > 1000000) v.fail("expected a positive whole number, got " + std::to_string(x));
  return static_cast<int>(x);
}

double positive_rate(const ConfigNode& n, const char* key) {
  const ConfigNode v = n.child(key);
  const double r = v.as_quantity(units::Dimension::Rate);
  if (!(r > 0)) v.fail("expected a positive rate such as \"400 Gbps\", got \"" + v.as_string() + "\"");
  return r;
}

ServerGroup load_group(const ConfigNode& n) {
  n.expect_map({"count", "gpu", "gpus_per_server", "intra", "nic"});
  ServerGroup g;
  g.count = positive_int(n, "count", 1, false);
  const ConfigNode gpu = n.child("gpu");
  g.gpu = gpu.as_string();
  if (!has_gpu(g.gpu)) gpu.fail("unknown GPU type \"" + g.gpu + "\"; valid: " + gpu_names());
  g.gpus_per_server = positive_int(n, "gpus_per_server", 8, false);
  const ConfigNode intra = n.child("intra");
  intra.expect_map({"kind", "bandwidth", "latency"});
  g.intra.kind = intra.child("kind").as_choice({"nvswitch", "pcie"});
  g.intra.bandwidth_Bps = positive_rate(intra, "bandwidth");
  g.intra.latency_s = intra.get_quantity("latency", units::Dimension::Time);
  const ConfigNode nic = n.child("nic");
  nic.expect_map({"bandwidth", "latency", "per_gpu"});
  g.nic.bandwidth_Bps = positive_rate(nic, "bandwidth");
  g.nic.latency_s = nic.get_quantity("latency", units::Dimension::Time);
  g.nic.per_gpu = nic.get_bool("per_gpu", true);
  return g;
}

}  // namespace

Cluster load_cluster(const ConfigNode& root) {
  root.expect_map({"name", "servers", "network"});
  Cluster c;
  c.name = root.get_string("name", root.file_stem());
  const ConfigNode servers = root.child("servers");
  for (const ConfigNode& g : servers.items()) c.groups.push_back(load_group(g));
  if (c.groups.empty()) servers.fail("expected at least one server group");
  const ConfigNode net = root.child("network");
  net.expect_map({"kind", "latency", "oversubscription"});
  c.fabric.kind = net.has("kind") ? net.child("kind").as_choice({"fat-tree"}) : "fat-tree";
  c.fabric.latency_s = net.get_quantity("latency", units::Dimension::Time);
  if (net.has("oversubscription")) {
    const ConfigNode o = net.child("oversubscription");
    c.fabric.oversubscription = o.as_double();
    if (!(c.fabric.oversubscription >= 1))
      o.fail("expected a ratio of at least 1 (1 is non-blocking), got \"" + o.as_string() + "\"");
  }
  build_network(c);
  return c;
}

Cluster load_cluster_file(const std::string& path) {
  return load_cluster(ConfigNode::load_file(path));
}

}  // namespace dejavu::platforms
