#include "sim/analytic_engine.h"
#include "sim/collective.h"
#include "sim/engine.h"

namespace dejavu::sim {

Registry<Engine>& engines() {
  static Registry<Engine> registry("engine");
  return registry;
}

void register_builtins() {
  engines().add("analytic",
                "list scheduler; closed-form alpha-beta communication, no contention (fast)",
                [] { return std::make_unique<AnalyticEngine>(); });
  register_collective_algorithms();
}

}  // namespace dejavu::sim
