#include "sim/flow_symmetry.h"

#include <algorithm>
#include <unordered_map>

namespace dejavu::sim {

namespace {

int direction(const Hop& h) { return 2 * h.link + (h.forward ? 0 : 1); }

// Per link direction, the comm set whose flows cross it (-1: none yet; -2: several).
struct Owners {
  std::vector<int> set;
  explicit Owners(size_t directions) : set(directions, -1) {}
  void mark(int dir, int s) { set[dir] = set[dir] == -1 || set[dir] == s ? s : -2; }
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

// The set's groups joined by a direction both cross, over every shape of the set; classes
// in order of their lowest group.
std::vector<std::vector<int>> classes_of(const Network& net, const std::vector<GroupedFlows>& shapes,
                                         const std::vector<size_t>& of_set) {
  const size_t groups = shapes[of_set[0]].group_begin->size() - 1;
  std::vector<int> parent(groups);
  for (size_t g = 0; g < groups; ++g) parent[g] = static_cast<int>(g);
  auto find = [&](int g) {
    while (parent[g] != g) g = parent[g] = parent[parent[g]];
    return g;
  };
  std::unordered_map<int, int> crossed_by;  // direction -> a group crossing it
  for (size_t i : of_set)
    for (size_t g = 0; g < groups; ++g)
      for_each_hop(net, shapes[i], g, [&](const Hop& h) {
        const auto [it, fresh] = crossed_by.emplace(direction(h), static_cast<int>(g));
        if (!fresh) parent[find(static_cast<int>(g))] = find(it->second);
      });
  std::vector<int> index(groups, -1);
  std::vector<std::vector<int>> classes;
  for (size_t g = 0; g < groups; ++g) {
    int& at = index[static_cast<size_t>(find(static_cast<int>(g)))];
    if (at < 0) {
      at = static_cast<int>(classes.size());
      classes.emplace_back();
    }
    classes[static_cast<size_t>(at)].push_back(static_cast<int>(g));
  }
  return classes;
}

std::vector<double> class_pattern(const Network& net, const std::vector<GroupedFlows>& shapes,
                                  const std::vector<size_t>& of_set, const std::vector<int>& groups) {
  std::vector<double> out;
  std::unordered_map<int, int> first_use;
  for (size_t i : of_set)
    for (int g : groups) append_pattern(net, shapes[i], static_cast<size_t>(g), first_use, out);
  return out;
}

SetSymmetry classify(const Network& net, const Faults& faults, const std::vector<GroupedFlows>& shapes,
                     const std::vector<size_t>& of_set, const Owners& owners) {
  SetSymmetry s;
  for (size_t i : of_set)
    if (touches_fault(net, faults, shapes[i])) return s;
  std::vector<std::vector<int>> classes = classes_of(net, shapes, of_set);
  if (classes.size() < 2) return s;
  const std::vector<double> first = class_pattern(net, shapes, of_set, classes[0]);
  for (size_t c = 1; c < classes.size(); ++c)
    if (class_pattern(net, shapes, of_set, classes[c]) != first) return s;
  const int set = shapes[of_set[0]].comm_set;
  bool alone = true;
  for (size_t i : of_set)
    for (size_t g = 0; g + 1 < shapes[i].group_begin->size(); ++g)
      for_each_hop(net, shapes[i], g, [&](const Hop& h) { alone = alone && owners.set[direction(h)] == set; });
  s.play = alone ? Play::Once : Play::Speculate;
  s.classes = std::move(classes);
  return s;
}

}  // namespace

std::vector<SetSymmetry> symmetric_comm_sets(const Network& net, const Faults& faults,
                                             const std::vector<GroupedFlows>& shapes, int comm_set_count) {
  std::vector<std::vector<size_t>> of_set(static_cast<size_t>(comm_set_count));
  Owners owners(2 * static_cast<size_t>(net.link_count()));
  for (size_t i = 0; i < shapes.size(); ++i) {
    const GroupedFlows& t = shapes[i];
    of_set[static_cast<size_t>(t.comm_set)].push_back(i);
    for (size_t g = 0; g + 1 < t.group_begin->size(); ++g)
      for_each_hop(net, t, g, [&](const Hop& h) { owners.mark(direction(h), t.comm_set); });
  }
  std::vector<SetSymmetry> out(static_cast<size_t>(comm_set_count));
  for (size_t c = 0; c < of_set.size(); ++c)
    if (!of_set[c].empty()) out[c] = classify(net, faults, shapes, of_set[c], owners);
  return out;
}

void SymmetryGuard::claim(TaskId task, int kind, const std::vector<int32_t>& dirs) {
  for (int32_t d : dirs) {
    for (const auto& [k, n] : flows_[d])
      if (k != kind && n > 0) broken_.insert(task);
    for (const Claim& c : claims_[d])
      if (c.kind != kind) {
        broken_.insert(task);
        broken_.insert(c.task);
      }
    claims_[d].push_back(Claim{task, kind});
  }
}

void SymmetryGuard::release(TaskId task, const std::vector<int32_t>& dirs) {
  for (int32_t d : dirs) {
    auto& here = claims_[d];
    for (size_t i = 0; i < here.size(); ++i)
      if (here[i].task == task) {
        here[i] = here.back();
        here.pop_back();
        break;
      }
  }
}

void SymmetryGuard::flow_enters(int kind, const int32_t* dirs, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    for (const Claim& c : claims_[dirs[i]])
      if (c.kind != kind) broken_.insert(c.task);
    auto& here = flows_[dirs[i]];
    auto it = std::find_if(here.begin(), here.end(), [&](const auto& p) { return p.first == kind; });
    if (it == here.end())
      here.emplace_back(kind, 1);
    else
      ++it->second;
  }
}

void SymmetryGuard::flow_leaves(int kind, const int32_t* dirs, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    auto& here = flows_[dirs[i]];
    for (size_t j = 0; j < here.size(); ++j)
      if (here[j].first == kind && --here[j].second == 0) {
        here[j] = here.back();
        here.pop_back();
        break;
      }
  }
}

}  // namespace dejavu::sim
