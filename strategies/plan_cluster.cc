#include "strategies/plan_cluster.h"

#include <string>

#include "platforms/cluster_part.h"
#include "platforms/gpu_order.h"
#include "sim/error.h"

namespace dejavu::strategies {

platforms::Cluster cluster_for_plan(const platforms::Cluster& platform, const Plan& plan) {
  if (plan.use_gpus > platform.gpu_count()) {
    auto it = plan.where.find("gpus");
    throw ConfigError(it != plan.where.end() ? it->second : SourceLoc{plan.file, 0, 0}, "gpus",
                      std::to_string(plan.use_gpus) + " GPUs, but platform " + platform.name + " has " +
                          std::to_string(platform.gpu_count()) + "; valid: 1 to " +
                          std::to_string(platform.gpu_count()));
  }
  if (plan.comm_sms != Plan::kAutoCommSms)
    for (const platforms::GpuSlot& slot : platform.gpus)
      if (slot.spec->sms > 0 && plan.comm_sms >= slot.spec->sms) {
        auto it = plan.where.find("comm_sms");
        throw ConfigError(it != plan.where.end() ? it->second : SourceLoc{plan.file, 0, 0}, "comm_sms",
                          std::to_string(plan.comm_sms) + " SMs, but the " + slot.spec->name + " has " +
                              std::to_string(slot.spec->sms) + "; valid: auto, or 0 to " +
                              std::to_string(slot.spec->sms - 1));
      }
  return platforms::first_gpus(platforms::ordered_by_gpu(platform, plan.gpu_order), plan.use_gpus);
}

}  // namespace dejavu::strategies
