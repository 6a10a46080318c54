#include "sim/analytic_engine.h"
#include "sim/collective.h"
#include "sim/engine.h"
#include "sim/simgrid_engine.h"

namespace dejavu::sim {

Registry<Engine>& engines() {
  static Registry<Engine> registry("engine");
  return registry;
}

void register_builtins() {
  engines().add("analytic",
                "list scheduler; closed-form alpha-beta communication, links shared max-min fair among "
                "transfers in flight (fast)",
                [] { return std::make_unique<AnalyticEngine>(true); });
  engines().add("analytic-no-contention", "the analytic engine with every transfer priced as if alone",
                [] { return std::make_unique<AnalyticEngine>(false); });
  engines().add("simgrid", "SimGrid flow-level network: contention, sharing; --collectives closed|flow|step",
                [] { return std::make_unique<SimGridEngine>(); });
  register_collective_algorithms();
}

}  // namespace dejavu::sim
