// The machine as a graph: hosts (GPUs) and switches joined by full-duplex links, each
// direction with the link's full bandwidth. Routes are shortest by latency (then by hop
// count, then by node id, so they are deterministic) and never pass through a host: a GPU
// does not forward traffic. Routes are computed on first use and cached: between two hosts
// from shortest paths among switches only, so the cost grows with switches, not host pairs.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dejavu::sim {

struct Link {
  std::string name;
  int a = -1, b = -1;        // endpoints (node ids)
  double bandwidth_Bps = 0;  // per direction
  double latency_s = 0;
};

struct Node {
  std::string name;
  bool is_host = false;
  int locality = -1;          // hosts: which server (hierarchical collectives group by it)
  double step_latency_s = 0;  // hosts: software cost of one communication step (NCCL's
                              // kernel and proxy overhead), paid once per step it sends
  // Switches that reduce in the switch (NVLink SHARP, NCCL's NVLS): the reduction's rate and
  // latency, and how many GPUs hang off the switch (it serves a group of all of them).
  double reduce_Bps = 0, reduce_latency_s = 0;
  int reduce_hosts = 0;
};

// One link crossed in one direction: `forward` means from link.a to link.b.
struct Hop {
  int link = -1;
  bool forward = true;
};

// How the hosts nest, when the network's builder knows it (platforms/ declares it for its
// fat-trees): leaves of hosts, each host's links up to its leaf switch, each leaf's uplink
// to one spine. Hosts of one leaf that share a locality (a server) reach each other by their
// own route. An engine that routes by zones (SimGrid) uses it where it gives the routes
// route() gives (sim/zone_routes.h checks that).
struct Hierarchy {
  struct Leaf {
    std::vector<int> hosts;
    int uplink = -1;  // its link to the spine, crossed forward going up; -1: none
  };
  std::vector<Leaf> leaves;
  std::vector<std::vector<Hop>> up;  // per node: a host's links up to its leaf switch, in order
};

struct PathCost {
  double latency_s = 0;
  double bottleneck_Bps = 0;  // infinity for a route of no links (a host to itself)
};

class Network {
 public:
  int add_host(const std::string& name, int locality = -1, double step_latency_s = 0);
  int add_switch(const std::string& name);
  int add_link(const std::string& name, int a, int b, double bandwidth_Bps, double latency_s);
  // Marks switch `id` as reducing in the switch for the `hosts` GPUs joined to it.
  void set_in_switch_reduction(int id, double bandwidth_Bps, double latency_s, int hosts);
  bool reduces_in_switch() const { return reduces_in_switch_; }  // some switch does

  int node_count() const { return static_cast<int>(nodes_.size()); }
  int link_count() const { return static_cast<int>(links_.size()); }
  const Node& node(int id) const { return nodes_.at(id); }
  const Link& link(int id) const { return links_.at(id); }
  const std::vector<Link>& links() const { return links_; }

  // Throws ModelError naming a host that has no path to `hub` through switches alone;
  // when none does, every pair of hosts has a route (through the hub if not shorter).
  void check_hosts_reach(int hub) const;

  // Throws ModelError when dst cannot be reached from src.
  const std::vector<Hop>& route(int src, int dst) const;
  PathCost path_cost(int src, int dst) const;

  // The builder's account of how hosts nest (null: none); adding a link drops it.
  void set_hierarchy(Hierarchy h) {
    hierarchy_ = std::move(h);
    has_hierarchy_ = true;
  }
  const Hierarchy* hierarchy() const { return has_hierarchy_ ? &hierarchy_ : nullptr; }

 private:
  struct Adjacent {
    int node;
    int link;
  };
  const std::vector<int>& predecessor_links(int src) const;

  // Host to host: hosts do not forward, so a route is a link from the source to a switch,
  // a path through switches alone, and a link from a switch to the destination. Switches
  // joined by switch-to-switch links form small components (a server's own switches; the
  // leaves, rails and spine), so a shortest-path tree per switch over its component costs
  // what the fabric's switches cost, not what its GPUs do.
  struct SwitchTree {
    std::vector<double> latency;  // by index within the component
    std::vector<int> hops, pred;  // pred: link into the switch on the path from the root
  };
  std::vector<Hop> host_route(int src, int dst) const;
  // Latency and hop count of the shortest path from switch a to switch b of one component
  // (infinity: none), appending its hops to `path` if given. A component that is a tree
  // (the leaves and spine of every fabric dejavu builds) has one path, found by climbing
  // to the common ancestor; others take a shortest-path tree from a.
  double switch_path(int a, int b, int& hops, std::vector<Hop>* path) const;
  const SwitchTree& switch_tree(int root) const;
  void index_switch_components() const;

  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<std::vector<Adjacent>> adjacency_;
  mutable std::unordered_map<int, std::vector<int>> pred_cache_;  // src -> link into node
  mutable std::unordered_map<int64_t, std::vector<Hop>> route_cache_;
  mutable std::vector<int> component_, local_;                // per switch node (-1: a host)
  mutable std::vector<std::vector<int>> members_;             // per component: its switches
  mutable std::vector<char> is_tree_;                         // per component
  mutable std::vector<int> up_link_, depth_;                  // per switch: its spanning tree's link up, depth
  mutable std::unordered_map<int, SwitchTree> switch_trees_;  // root switch -> tree
  Hierarchy hierarchy_;
  bool has_hierarchy_ = false;
  bool reduces_in_switch_ = false;
};

}  // namespace dejavu::sim
