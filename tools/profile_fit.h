// `dejavu profile-fit`: how much profiling can a planner skip? Given measured stage times
// for a few configurations, predict the rest. Each configuration's stage is priced by the
// simulator (block_costs: its layers' forward and backward per microbatch on the platform's
// first GPU type); a line measured = a x simulated + b is fitted on the first `train` rows
// and predicts the held-out ones. The error on those, against the simulator alone, says
// how far a few profiles carry.
//
// CSV: tp,micro_batch,recompute,sequence_parallel,layers,seconds
//      (recompute none | selective | full; sequence_parallel true | false; seconds: one
//       microbatch's forward + backward over `layers` decoder layers)
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "workloads/model_graph.h"

namespace dejavu::tools {

struct StageMeasurement {
  int tp = 1, micro_batch = 1, layers = 1;
  std::string recompute = "none";
  bool sequence_parallel = false;
  double seconds = 0;
  std::string file;
  int line = 0;
};

struct StagePrediction {
  StageMeasurement row;
  double simulated_s = 0;  // the simulator alone
  double fitted_s = 0;     // a x simulated + b
  bool held_out = false;
};

struct ProfileFit {
  double a = 1, b = 0;
  int train = 0;
  std::vector<StagePrediction> rows;
  double heldout_error_simulated = 0, heldout_error_fitted = 0;  // mean |relative error|
};

std::vector<StageMeasurement> load_stage_measurements(const std::string& path);
ProfileFit fit_profiles(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                        const std::vector<StageMeasurement>& rows, int train);
void write_profile_fit(std::ostream& out, const ProfileFit& fit);

}  // namespace dejavu::tools
