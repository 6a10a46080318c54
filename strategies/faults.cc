#include "strategies/faults.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "sim/limits.h"
#include "strategies/recovery/recovery_policy.h"

namespace dejavu::strategies {

namespace {
constexpr double kForever = std::numeric_limits<double>::infinity();

int gpu_index_of(const ConfigNode& e, const char* key, const platforms::Cluster& c) {
  // A GPU's index in the platform: from 0 to its GPU count - 1.
  const ConfigNode n = e.child(key);
  const long long g = n.as_int(-limits::kMaxGpus, limits::kMaxGpus);
  if (g < 0 || g >= c.gpu_count())
    n.fail("GPU " + std::to_string(g) + " does not exist; valid: 0 to " + std::to_string(c.gpu_count() - 1) +
           " (platform " + c.name + " has " + std::to_string(c.gpu_count()) + " GPUs)");
  return static_cast<int>(g);
}

int link_index_of(const ConfigNode& e, const platforms::Cluster& c) {
  const ConfigNode n = e.child("link");
  const std::string name = n.as_string();
  for (int i = 0; i < c.network.link_count(); ++i)
    if (c.network.link(i).name == name) return i;
  std::string examples;
  for (int i = 0; i < std::min(3, c.network.link_count()); ++i) examples += c.network.link(i).name + ", ";
  n.fail("unknown link \"" + name + "\"; valid: a link of platform " + c.name + " (" + examples +
         "...; `dejavu export-platform` lists them)");
}

double time_of(const ConfigNode& e, const char* key, double fallback) {
  if (!e.has(key)) return fallback;
  const ConfigNode n = e.child(key);
  const std::string text = n.as_string();
  if (text.find_first_not_of(" \t") != std::string::npos && text[text.find_first_not_of(" \t")] == '-')
    n.fail("a time in the past (" + text + "); valid: 0 s or later, from the start of the run");
  return n.as_quantity(units::Dimension::Time, 0, limits::kMaxTime);
}

double positive_factor(const ConfigNode& e, const char* key) {
  const ConfigNode n = e.child(key);
  const double f = n.as_double(-limits::kMaxFactor, limits::kMaxFactor);
  if (!(f > 0))
    n.fail("expected a factor above 0, got " + n.as_string() + " (to take a link down use kind: link_down)");
  return f;
}
}  // namespace

std::vector<int> FaultScenario::faulty_gpus(const platforms::Cluster& c) const {
  std::set<int> out;
  for (const FaultEvent& e : events) {
    if (e.gpu >= 0) out.insert(e.gpu);
    for (int g = 0; e.server >= 0 && g < c.gpu_count(); ++g)
      if (c.gpus[g].server == e.server) out.insert(g);
  }
  return {out.begin(), out.end()};
}

FaultScenario load_fault_scenario(const ConfigNode& root, const platforms::Cluster& c) {
  root.expect_map({"seed", "events", "recovery"});
  FaultScenario s;
  s.file = root.file();
  s.seed = static_cast<unsigned long long>(root.get_int("seed", 1, 0, limits::kMaxSeed));
  if (root.has("events")) {
    for (const ConfigNode& e : root.child("events").items()) {
      const std::string kind = e.child("kind").as_choice(
          {"straggler", "link_degrade", "link_down", "gpu_fail", "server_fail", "random_failures", "byzantine"});
      FaultEvent ev;
      ev.kind = kind;
      if (kind == "straggler") {
        e.expect_map({"kind", "device", "speed", "from", "to"});
        ev.gpu = gpu_index_of(e, "device", c);
        ev.factor = positive_factor(e, "speed");
      } else if (kind == "link_degrade") {
        e.expect_map({"kind", "link", "factor", "from", "to"});
        ev.link = link_index_of(e, c);
        ev.factor = positive_factor(e, "factor");
      } else if (kind == "link_down") {
        e.expect_map({"kind", "link", "from", "to"});
        ev.link = link_index_of(e, c);
        ev.factor = 0;
      } else if (kind == "gpu_fail") {
        e.expect_map({"kind", "device", "at"});
        ev.gpu = gpu_index_of(e, "device", c);
        ev.at_s = time_of(e, "at", 0);
      } else if (kind == "server_fail") {
        e.expect_map({"kind", "server", "at"});
        ev.server = static_cast<int>(e.child("server").as_int(0, c.server_count() - 1));
        ev.at_s = time_of(e, "at", 0);
      } else if (kind == "random_failures") {
        e.expect_map({"kind", "mtbf"});
        s.mtbf_s = e.child("mtbf").as_quantity(units::Dimension::Time, 1, limits::kMaxTime * 1e3);  // per GPU
        continue;
      } else {  // byzantine
        e.expect_map({"kind", "device", "mode", "factor"});
        ByzantineWorker w;
        w.gpu = gpu_index_of(e, "device", c);
        if (e.has("mode")) w.mode = e.child("mode").as_choice({"sign_flip", "scale", "random"});
        w.factor = e.get_double("factor", w.mode == "scale" ? 10 : -1, -1e6, 1e6);
        s.byzantine.push_back(w);
        continue;
      }
      if (kind == "straggler" || kind == "link_degrade" || kind == "link_down") {
        ev.from_s = time_of(e, "from", 0);
        ev.to_s = time_of(e, "to", kForever);
        if (ev.to_s <= ev.from_s)
          e.child("to").fail("ends before it starts (from " + units::format_time(ev.from_s) + "); valid: a later time");
      }
      s.events.push_back(ev);
    }
  }
  if (root.has("recovery")) {
    const ConfigNode r = root.child("recovery");
    r.expect_map({"policy", "interval", "restart", "spares", "swap"});
    if (r.has("policy")) s.recovery.policy = r.child("policy").as_choice(recovery_policies().names());
    s.recovery.interval_s = r.get_quantity("interval", units::Dimension::Time, 0, 1e-3, limits::kMaxTime);
    s.recovery.restart_s = r.get_quantity("restart", units::Dimension::Time, s.recovery.restart_s, 0, limits::kMaxTime);
    s.recovery.swap_s = r.get_quantity("swap", units::Dimension::Time, s.recovery.swap_s, 0, limits::kMaxTime);
    s.recovery.spares = static_cast<int>(r.get_int("spares", 0, 0, limits::kMaxGpus));
  }
  return s;
}

FaultScenario load_fault_scenario_file(const std::string& path, const platforms::Cluster& cluster) {
  return load_fault_scenario(ConfigNode::load_file(path), cluster);
}

sim::Faults engine_faults(const FaultScenario& s, const platforms::Cluster& c, double horizon_s) {
  sim::Faults f;
  auto fail = [&](int host, double at) {
    auto [it, fresh] = f.host_fail_s.try_emplace(host, at);
    if (!fresh) it->second = std::min(it->second, at);
  };
  for (const FaultEvent& e : s.events) {
    if (e.kind == "straggler") f.host_speed[c.gpus[e.gpu].host].push_back({e.from_s, e.to_s, e.factor});
    if (e.kind == "link_degrade" || e.kind == "link_down")
      f.link_bandwidth[e.link].push_back({e.from_s, e.to_s, e.factor});
    if (e.kind == "gpu_fail") fail(c.gpus[e.gpu].host, e.at_s);
    if (e.kind == "server_fail")
      for (const auto& slot : c.gpus)
        if (slot.server == e.server) fail(slot.host, e.at_s);
  }
  if (s.mtbf_s > 0) {
    std::mt19937_64 rng(s.seed);
    for (const auto& slot : c.gpus) {
      // Exponential by inversion, from 53 random bits: the same draw on every machine.
      const double u = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
      const double at = -std::log(u) * s.mtbf_s;
      if (at < horizon_s) fail(slot.host, at);
    }
  }
  return f;
}

}  // namespace dejavu::strategies
