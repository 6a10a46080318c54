#include "sim/flow_symmetry.h"

#include <unordered_map>

namespace dejavu::sim {

namespace {

int direction(const Hop& h) { return 2 * h.link + (h.forward ? 0 : 1); }

// Per link direction, the comm set and the group of it that cross it (-1: none yet;
// -2: several).
struct Owners {
  std::vector<int> set, group;
  explicit Owners(size_t directions) : set(directions, -1), group(directions, -1) {}
  void mark(int dir, int s, int g) {
    if (set[dir] == -1) {
      set[dir] = s;
      group[dir] = g;
    } else if (set[dir] != s) {
      set[dir] = -2;
    } else if (group[dir] != g) {
      group[dir] = -2;
    }
  }
  bool private_to_a_group(int dir, int s) const { return set[dir] == s && group[dir] >= 0; }
};

template <class F>
void for_each_hop(const Network& net, const GroupedFlows& t, size_t g, F&& f) {
  for (int32_t i = (*t.group_begin)[g]; i < (*t.group_begin)[g + 1]; ++i) {
    const FlowSpec& s = t.exp->flows[i];
    if (s.src != s.dst)
      for (const Hop& h : net.route(s.src, s.dst)) f(h);
  }
}

// Group g's flows in `t` as numbers: sizes, dependencies (relative to the group), senders'
// step latencies, routes with links numbered by first use in `first_use`.
void append_pattern(const Network& net, const GroupedFlows& t, size_t g, std::unordered_map<int, int>& first_use,
                    std::vector<double>& out) {
  const int32_t begin = (*t.group_begin)[g], end = (*t.group_begin)[g + 1];
  out.push_back(end - begin);
  for (int32_t i = begin; i < end; ++i) {
    const FlowSpec& s = t.exp->flows[i];
    out.insert(out.end(), {s.bytes, static_cast<double>(s.dep_count), net.node(s.src).step_latency_s,
                           static_cast<double>(s.src == s.dst)});
    for (int32_t k = 0; k < s.dep_count; ++k) out.push_back(t.exp->deps[s.dep_begin + k] - begin);
    if (s.src == s.dst) continue;
    const auto& route = net.route(s.src, s.dst);
    out.push_back(static_cast<double>(route.size()));
    for (const Hop& h : route) {
      const auto [it, fresh] = first_use.emplace(direction(h), static_cast<int>(first_use.size()));
      const Link& l = net.link(h.link);
      out.insert(out.end(), {static_cast<double>(it->second), l.bandwidth_Bps, l.latency_s});
    }
  }
}

bool touches_fault(const Network& net, const Faults& faults, const GroupedFlows& t) {
  if (faults.empty()) return false;
  for (const FlowSpec& s : t.exp->flows) {
    for (int host : {s.src, s.dst})
      if (faults.host_speed.count(host) || faults.host_fail_s.count(host)) return true;
    if (s.src != s.dst)
      for (const Hop& h : net.route(s.src, s.dst))
        if (faults.link_bandwidth.count(h.link)) return true;
  }
  return false;
}

bool symmetric(const Network& net, const Faults& faults, const std::vector<GroupedFlows>& shapes,
               const std::vector<size_t>& of_set, const Owners& owners) {
  const int set = shapes[of_set[0]].comm_set;
  const size_t groups = shapes[of_set[0]].group_begin->size() - 1;
  if (groups < 2) return false;
  for (size_t i : of_set) {
    if (touches_fault(net, faults, shapes[i])) return false;
    bool alone = true;
    for (size_t g = 0; g < groups; ++g)
      for_each_hop(net, shapes[i], g,
                   [&](const Hop& h) { alone = alone && owners.private_to_a_group(direction(h), set); });
    if (!alone) return false;
  }
  std::vector<double> first, other;
  for (size_t g = 0; g < groups; ++g) {
    std::vector<double>& pattern = g == 0 ? first : other;
    pattern.clear();
    std::unordered_map<int, int> first_use;
    for (size_t i : of_set) append_pattern(net, shapes[i], g, first_use, pattern);
    if (g > 0 && other != first) return false;
  }
  return true;
}

}  // namespace

std::vector<char> symmetric_comm_sets(const Network& net, const Faults& faults, const std::vector<GroupedFlows>& shapes,
                                      int comm_set_count) {
  std::vector<std::vector<size_t>> of_set(static_cast<size_t>(comm_set_count));
  Owners owners(2 * static_cast<size_t>(net.link_count()));
  for (size_t i = 0; i < shapes.size(); ++i) {
    const GroupedFlows& t = shapes[i];
    of_set[static_cast<size_t>(t.comm_set)].push_back(i);
    for (size_t g = 0; g + 1 < t.group_begin->size(); ++g)
      for_each_hop(net, t, g, [&](const Hop& h) { owners.mark(direction(h), t.comm_set, static_cast<int>(g)); });
  }
  std::vector<char> out(static_cast<size_t>(comm_set_count), 0);
  for (size_t c = 0; c < of_set.size(); ++c)
    if (!of_set[c].empty()) out[c] = symmetric(net, faults, shapes, of_set[c], owners);
  return out;
}

}  // namespace dejavu::sim
