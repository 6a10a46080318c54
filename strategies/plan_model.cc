#include "strategies/plan_model.h"

#include <string>
#include <utility>

#include "sim/error.h"
#include "workloads/dlrm.h"

namespace dejavu::strategies {

namespace {
[[noreturn]] void fail_at_sharding(const Plan& plan, const std::string& problem) {
  auto it = plan.where.find("embedding_sharding");
  throw ConfigError(it != plan.where.end() ? it->second : SourceLoc{plan.file, 0, 0}, "embedding_sharding", problem);
}
}  // namespace

workloads::ModelGraph model_for_plan(const workloads::ModelGraph& model, const Plan& plan) {
  const std::vector<std::string>& modes = plan.embedding_sharding;
  if (modes.empty() || modes == model.embedding_sharding) return model;
  if (model.embedding_sharding.empty())
    fail_at_sharding(plan, "model " + model.name + " has no embedding tables; valid: drop embedding_sharding");
  const size_t groups = model.embedding_sharding.size();
  if (modes.size() != 1 && modes.size() != groups)
    fail_at_sharding(plan, std::to_string(modes.size()) + " shardings for the " + std::to_string(groups) +
                               " table groups of model " + model.name +
                               "; valid: one sharding for them all, or a list of " + std::to_string(groups));
  return workloads::with_embedding_sharding(model, modes);
}

workloads::ModelGraph model_for_plan(workloads::ModelGraph&& model, const Plan& plan) {
  if (plan.embedding_sharding.empty()) return std::move(model);
  return model_for_plan(static_cast<const workloads::ModelGraph&>(model), plan);
}

}  // namespace dejavu::strategies
