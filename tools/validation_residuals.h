// Error bars from validation: each simulated step-time row of the shipped suites (what ran,
// predicted, measured) is a residual; a prediction's band is the spread of measured /
// predicted over the residuals of runs like it, and a plan using what no validated run used
// is flagged.
//
// `dejavu validate --residuals FILE suites...` writes the residuals (CSV); `make validate`
// rewrites strategies/validation/residuals.csv, which the build embeds, so `simulate` needs
// no data file at run time.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "sim/kernel.h"
#include "strategies/plan.h"
#include "strategies/report.h"
#include "workloads/model_graph.h"

namespace dejavu::tools {

// What a validated run was: its GPU type, model size and parallelism.
struct RunShape {
  bool language_model = true;  // every validated run trains a transformer language model
  std::string gpu;
  double params = 0;
  int gpus = 0, tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, zero = 0;
  // Predicted with a step calibration of its GPU type (platforms::Efficiency::step), as
  // platforms::step_calibration_kind names it: "none", "fitted" (its framework's) or "typical"
  // (`--calibration typical`). Its band comes from residuals predicted so too.
  std::string steps = "none";
  // What its GEMMs ran in (precision_of): its band comes from runs in the same.
  std::string precision = "16-bit";
  // What it kept in the host's memory (offload_of): a run offloading what none did is flagged.
  std::string offload;
};

// A plan's offload as validation names it: any of optimizer, parameters, activations (whole
// items) or activation-layers, joined by '+' in that order; empty when nothing leaves the GPU.
std::string offload_of(const strategies::Plan& plan);

// A model dtype's precision as validation groups runs: "16-bit" (bf16, fp16), "fp8", "fp4",
// or "fp32" (tf32 GEMMs; no validated run).
std::string precision_of(sim::DType dtype);

struct Residual {
  std::string suite, set;  // set: fit, held-out, or all (a suite nothing was fitted to)
  RunShape run;
  double measured_s = 0, predicted_s = 0;
};

void write_residuals(std::ostream& out, const std::vector<Residual>& rows);
// Throws ConfigError naming `name` and the line for a malformed row.
std::vector<Residual> parse_residuals(const std::string& text, const std::string& name);
// The residuals embedded at build time.
const std::vector<Residual>& shipped_residuals();

// The band for a prediction of `predicted_s` for `run`: the 10th to 90th percentile of
// measured / predicted over the residuals on the same GPU type and precision not fitted to
// (held-out and all), step-calibrated as the run is (RunShape::steps), when there are at least
// kMinBandRuns; and what the run does that none of them did.
constexpr int kMinBandRuns = 5;
strategies::ValidationBand band_for(const std::vector<Residual>& rows, const RunShape& run, double predicted_s);

// The shape of a simulated job (`mixed` for a cluster of several GPU types).
RunShape shape_of(const strategies::Plan& plan, const workloads::ModelGraph& model,
                  const std::vector<std::string>& gpu_types);
// The band of a simulated job (none for one that stopped).
strategies::ValidationBand band_of(const workloads::ModelGraph& model, const platforms::Cluster& cluster,
                                   const strategies::Plan& plan, const strategies::Report& report);

}  // namespace dejavu::tools
