#include <memory>

#include "strategies/recovery/recovery_policy.h"

namespace dejavu::strategies {

namespace {

class CheckpointRestart : public RecoveryPolicy {
 public:
  RecoveryAction on_failure(int&) const override { return RecoveryAction::Restart; }
};

class HotSpares : public RecoveryPolicy {
 public:
  RecoveryAction on_failure(int& spares_left) const override {
    if (spares_left <= 0) return RecoveryAction::Restart;
    --spares_left;
    return RecoveryAction::SwapSpare;
  }
};

class Elastic : public RecoveryPolicy {
 public:
  RecoveryAction on_failure(int&) const override { return RecoveryAction::Shrink; }
};

}  // namespace

Registry<RecoveryPolicy>& recovery_policies() {
  static Registry<RecoveryPolicy> registry("recovery policy");
  return registry;
}

void register_recovery_policies() {
  auto& r = recovery_policies();
  r.add("checkpoint", "restart after `restart` and roll back to the last checkpoint",
        [] { return std::make_unique<CheckpointRestart>(); });
  r.add("spares", "a hot spare takes over after `swap` while `spares` last, then as checkpoint",
        [] { return std::make_unique<HotSpares>(); });
  r.add("elastic", "go on without the lost server, re-planned for the GPUs left",
        [] { return std::make_unique<Elastic>(); });
}

}  // namespace dejavu::strategies
