#include "strategies/simulate.h"

#include "strategies/trace_lowering.h"

namespace dejavu::strategies {

Simulation simulate(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                    const Plan& plan, const std::string& engine,
                    const sim::EngineOptions& options) {
  Simulation s;
  s.job = lower(model, cluster, plan);
  s.result = sim::engines().make(engine)->run(s.job.graph, cluster.network, options);
  s.report = make_report(model, cluster, plan, s.job, s.result);
  return s;
}

Simulation simulate_trace(const workloads::ChakraTrace& trace, const platforms::Cluster& cluster,
                          const std::string& engine, const sim::EngineOptions& options) {
  Simulation s;
  s.job = lower_trace(trace, cluster);
  s.result = sim::engines().make(engine)->run(s.job.graph, cluster.network, options);
  workloads::ModelGraph model;
  model.name = trace.prefix.substr(trace.prefix.find_last_of('/') + 1);
  Plan plan;
  plan.name = "trace";
  s.report = make_report(model, cluster, plan, s.job, s.result);
  return s;
}

}  // namespace dejavu::strategies
