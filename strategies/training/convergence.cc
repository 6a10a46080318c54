#include "strategies/training/convergence.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "sim/error.h"
#include "strategies/training/aggregators/aggregator.h"
#include "strategies/training/convergence_model.h"
#include "strategies/training/trainer.h"

namespace dejavu::strategies {

using namespace convergence;

ConvergenceData parse_data_spec(const std::string& spec) {
  ConvergenceData d;
  const std::string prefix = "synthetic:";
  if (spec.rfind("synthetic", 0) != 0)
    throw ConfigError(SourceLoc{"--data", 0, 0}, "", "\"" + spec + "\"; valid: synthetic:classes=10,dim=64,...");
  std::stringstream ss(spec.size() > prefix.size() ? spec.substr(prefix.size()) : "");
  std::string kv;
  while (std::getline(ss, kv, ',')) {
    const size_t eq = kv.find('=');
    const std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0')
      throw ConfigError(SourceLoc{"--data", 0, 0}, k, "expected key=number, got \"" + kv + "\"");
    // Each key's range, and whether it must be whole; the data fit in memory (check_config).
    struct Key {
      const char* name;
      double min, max;
      bool whole;
    };
    static const Key keys[] = {
        {"classes", 2, 1000, true},           {"dim", 1, 100000, true}, {"samples", 1, 1000000, true},
        {"separation", 1e-6, 1e6, false},     {"skew", 0, 1, false},    {"imbalance", 1, 1e6, false},
        {"seed", 0, 9007199254740992.0, true}};
    const Key* key = nullptr;
    for (const Key& c : keys)
      if (k == c.name) key = &c;
    if (!key)
      throw ConfigError(
          SourceLoc{"--data", 0, 0}, k,
          "unknown key in \"" + kv + "\"; valid: classes, dim, samples, separation, skew, imbalance, seed");
    if (!std::isfinite(x) || x < key->min || x > key->max || (key->whole && x != std::floor(x))) {
      char range[128];
      std::snprintf(range, sizeof range, "expected %s from %g to %g, got %s",
                    key->whole ? "a whole number" : "a number", key->min, key->max, v.c_str());
      throw ConfigError(SourceLoc{"--data", 0, 0}, k, range);
    }
    if (k == "classes")
      d.classes = static_cast<int>(x);
    else if (k == "dim")
      d.dim = static_cast<int>(x);
    else if (k == "samples")
      d.samples_per_worker = static_cast<int>(x);
    else if (k == "separation")
      d.separation = x;
    else if (k == "skew")
      d.skew = x;
    else if (k == "imbalance")
      d.imbalance = x;
    else
      d.seed = static_cast<unsigned long long>(x);
  }
  return d;
}

void check_config(const ConvergenceConfig& c) {
  auto bad = [](const char* option, const std::string& problem) {
    throw ConfigError(SourceLoc{option, 0, 0}, "", problem);
  };
  const double elements = static_cast<double>(c.workers) * c.data.samples_per_worker * c.data.dim;
  if (elements > 1e8)
    bad("--data", "workers x samples x dim = " + std::to_string(static_cast<long long>(elements)) +
                      " numbers of training data; at most 1e8 (fewer samples or a smaller dim)");
  if (c.batch > c.data.samples_per_worker)
    bad("--batch", std::to_string(c.batch) + " samples per step from a shard of " +
                       std::to_string(c.data.samples_per_worker) +
                       "; valid: 1 to the shard's samples (--data samples=N)");
  const std::string problem = aggregators().make(c.aggregator)->check(c.workers, c.trim);
  if (!problem.empty()) bad("--trim", problem);
}

ConvergenceResult train_to_target(const ConvergenceConfig& c, const WorkerTiming& timing, const std::string& name) {
  check_config(c);
  return Trainer(c, timing, name).run();
}

double gradient_check(const std::string& kind, int dim, int classes, int hidden, unsigned long long seed) {
  ConvergenceData d;
  d.dim = dim;
  d.classes = classes;
  d.samples_per_worker = 16;
  d.seed = seed;
  const Data data = make_data(d, 1);
  const Model model(kind, dim, classes, hidden);
  Rng rng(seed);
  const VectorXd p = model.init(rng);
  std::vector<int> rows(16);
  std::iota(rows.begin(), rows.end(), 0);
  VectorXd g;
  model.loss(p, data.x[0], data.y[0], rows, &g);
  double worst = 0;
  for (int i = 0; i < model.size(); ++i) {
    VectorXd a = p, b = p;
    const double h = 1e-5;
    a[i] += h;
    b[i] -= h;
    const double fd =
        (model.loss(a, data.x[0], data.y[0], rows, nullptr) - model.loss(b, data.x[0], data.y[0], rows, nullptr)) /
        (2 * h);
    worst = std::max(worst, std::fabs(fd - g[i]) / std::max(1e-4, std::fabs(fd) + std::fabs(g[i])));
  }
  return worst;
}

}  // namespace dejavu::strategies
