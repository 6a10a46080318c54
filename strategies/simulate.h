// One simulated iteration, end to end: lower the plan, run an engine, build the report.
#pragma once

#include <string>

#include "sim/engine.h"
#include "strategies/lowering.h"
#include "strategies/report.h"
#include "workloads/chakra/chakra_trace.h"

namespace dejavu::strategies {

struct Simulation {
  LoweredJob job;
  sim::Result result;
  Report report;
};

Simulation simulate(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                    const Plan& plan, const std::string& engine = "analytic",
                    const sim::EngineOptions& options = {});

// A Chakra execution trace: the plan is in the trace (rank r on GPU r); the report has no
// model FLOPs to count.
Simulation simulate_trace(const workloads::ChakraTrace& trace, const platforms::Cluster& cluster,
                          const std::string& engine = "analytic", const sim::EngineOptions& options = {});

}  // namespace dejavu::strategies
