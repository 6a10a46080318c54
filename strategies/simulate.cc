#include "strategies/simulate.h"

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

}  // namespace dejavu::strategies
