#include "strategies/plan.h"

#include "strategies/schedules/schedule.h"

namespace dejavu::strategies {

namespace {
int positive(const ConfigNode& n, const char* key, int fallback, Plan& plan) {
  if (!n.has(key)) return fallback;
  const ConfigNode v = n.child(key);
  plan.where[key] = v.loc();
  const long long x = v.as_int();
  if (x <= 0 || x > (1LL << 24)) v.fail("expected a positive whole number, got " + std::to_string(x));
  return static_cast<int>(x);
}

[[noreturn]] void fail_at(const Plan& p, const std::string& key, const std::string& problem) {
  auto it = p.where.find(key);
  throw ConfigError(it != p.where.end() ? it->second : SourceLoc{p.file, 0, 0}, key, problem);
}

std::string divisors(int n) {
  std::string out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out += (out.empty() ? "" : ", ") + std::to_string(d);
  return out;
}
}  // namespace

Plan load_plan(const ConfigNode& root) {
  root.expect_map({"name", "tp", "pp", "dp", "micro_batch_size", "global_batch_size", "schedule",
                   "recompute"});
  Plan p;
  p.file = root.file();
  p.where[""] = root.loc();
  p.name = root.get_string("name", root.file_stem());
  p.tp = positive(root, "tp", 1, p);
  p.pp = positive(root, "pp", 1, p);
  p.dp = positive(root, "dp", 1, p);
  p.micro_batch_size = positive(root, "micro_batch_size", 1, p);
  const ConfigNode gb = root.child("global_batch_size");
  p.global_batch_size = positive(root, "global_batch_size", 1, p);
  if (root.has("schedule")) {
    const ConfigNode s = root.child("schedule");
    if (!schedules().has(s.as_string()))
      s.fail("unknown schedule \"" + s.as_string() + "\"; valid: " + schedules().names_joined());
    p.schedule = s.as_string();
  }
  if (root.has("recompute")) p.recompute = root.child("recompute").as_choice({"none", "full"});
  if (p.global_batch_size % (p.micro_batch_size * p.dp) != 0)
    gb.fail(std::to_string(p.global_batch_size) + " is not a multiple of micro_batch_size x dp = " +
            std::to_string(p.micro_batch_size * p.dp) + "; valid: any multiple of it");
  return p;
}

Plan load_plan_file(const std::string& path) { return load_plan(ConfigNode::load_file(path)); }

void validate(const Plan& p, const workloads::ModelGraph& model,
              const platforms::Cluster& cluster) {
  if (model.heads > 0 && model.heads % p.tp != 0)
    fail_at(p, "tp",
            std::to_string(p.tp) + " does not divide the " + std::to_string(model.heads) +
                " attention heads of model " + model.name + "; valid: " + divisors(model.heads));
  if (p.gpus() != cluster.gpu_count())
    fail_at(p, "dp",
            "tp x pp x dp = " + std::to_string(p.tp) + " x " + std::to_string(p.pp) + " x " +
                std::to_string(p.dp) + " = " + std::to_string(p.gpus()) + " GPUs, but platform " +
                cluster.name + " has " + std::to_string(cluster.gpu_count()) +
                "; valid: degrees whose product is " + std::to_string(cluster.gpu_count()));
  if (p.pp > model.layers)
    fail_at(p, "pp",
            std::to_string(p.pp) + " stages for " + std::to_string(model.layers) +
                " layers of model " + model.name + "; valid: 1 to " +
                std::to_string(model.layers));
}

}  // namespace dejavu::strategies
