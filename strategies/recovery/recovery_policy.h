// What a job does about a fail-stop (a GPU or server lost for good): a registry entry named
// by a fault scenario's `recovery: {policy: ...}` and run-horizon's --policy. run-horizon
// plays the policy over a whole run; converge applies it to real training.
#pragma once

#include "sim/registry.h"

namespace dejavu::strategies {

enum class RecoveryAction {
  Restart,    // everyone stops, restarts after `restart` and rolls back to the checkpoint
  SwapSpare,  // the same, but a hot spare takes the failed GPU's place after `swap`
  Shrink,     // the job goes on without the lost server, re-planned for what is left
};

class RecoveryPolicy {
 public:
  virtual ~RecoveryPolicy() = default;
  // The action for the next fail-stop given the hot spares left; takes a spare it uses.
  virtual RecoveryAction on_failure(int& spares_left) const = 0;
};

Registry<RecoveryPolicy>& recovery_policies();
void register_recovery_policies();  // called by strategies::register_builtins()

}  // namespace dejavu::strategies
