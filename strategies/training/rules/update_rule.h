// How the workers' gradients become model updates over time: a registry entry named by
// `converge --rule` (default: from the plan's sync and schedule). Each rule is one file in
// this folder, registered in update_rules.cc, and drives a Trainer's steps.
#pragma once

#include "sim/registry.h"
#include "strategies/training/trainer.h"

namespace dejavu::strategies::convergence {

class UpdateRule {
 public:
  virtual ~UpdateRule() = default;
  // Trains from `start` until the target, the step budget or the last worker's loss.
  virtual void run(Trainer& trainer, const VectorXd& start) const = 0;
};

Registry<UpdateRule>& update_rules();
void register_update_rules();  // called by register_training()

}  // namespace dejavu::strategies::convergence
