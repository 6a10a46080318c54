#include "strategies/training/builtins.h"

#include "strategies/training/aggregators/aggregator.h"
#include "strategies/training/rules/update_rule.h"

namespace dejavu::strategies {

void register_training() {
  convergence::register_update_rules();
  convergence::register_aggregators();
}

}  // namespace dejavu::strategies
