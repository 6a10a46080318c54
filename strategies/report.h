// What `simulate` tells a user: iteration time, throughput and MFU, the pipeline bubble,
// where each GPU's time went, and the busiest link. The JSON keys iteration_time_s,
// tflops_per_gpu, mfu and devices (busy_s, communication_s, idle_s per GPU) are a stable
// contract that later tools rely on.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "sim/engine.h"
#include "strategies/lowering.h"

namespace dejavu::strategies {

struct DeviceReport {
  int gpu = 0;
  std::string name;  // network host name, "server0/gpu3"
  std::string gpu_type;
  int stage = 0, dp_rank = 0, tp_rank = 0, cp_rank = 0;
  std::string simulated_as;  // the device that stood for it
  double busy_s = 0, communication_s = 0, exposed_communication_s = 0, idle_s = 0;
  double peak_memory_bytes = 0, memory_capacity_bytes = 0;
};

// One communication stream (tp-comm, pp-comm, dp-comm, param-gather, ...): how long its
// tasks ran, and how much of that ran under compute (hidden: overlap at work).
struct StreamCommReport {
  std::string stream;
  double busy_s = 0, hidden_s = 0;
};

struct SimulatedDeviceReport {
  std::string name;
  int stage = 0;
  int gpus = 0;  // how many GPUs it stands for
  double compute_s = 0, communication_s = 0, exposed_communication_s = 0, idle_s = 0;
  double compute_slowed_s = 0;  // of compute_s, beyond the kernels' own time (sim::DeviceTime)
  double bubble_fraction = 0;
  double peak_memory_bytes = 0, capacity_bytes = 0;
  std::vector<sim::MemoryPart> memory_at_peak;  // resident parts, then "activations"
  std::vector<StreamCommReport> communication;  // per stream it used
};

struct LinkReport {
  std::string name;
  std::string direction;  // "a->b"
  double bytes = 0;
  // What its traffic needs, bytes / (bandwidth * iteration time), and the fraction of the
  // iteration it was busy: the same, except that no link is busy more than all the time.
  // An engine that gives every transfer the whole link (analytic) can price more traffic
  // than a link carries; the report then says so rather than claim more than 100%.
  double demand = 0;
  double utilization = 0;
  // How long at least one flow was in flight on it, and the most flows at once; -1 and 0
  // when the engine does not track them (only the analytic engine sharing links does).
  double in_flight_s = -1;
  int peak_flows = 0;
};

// A link's busy fraction from its demand (bytes / (bandwidth * time)): at most 1.
double busy_fraction(double demand);

// How far validation says to trust an iteration time (tools/validation_residuals.h): the
// band measured runs like this one fell in, and what this run does that none of them did.
struct ValidationBand {
  bool has_band = false;
  double low_s = 0, high_s = 0;          // the prediction times the ratios below
  double ratio_low = 0, ratio_high = 0;  // measured / predicted, 10th and 90th percentile
  int runs = 0;                          // validated runs the band comes from
  std::string gpu;
  std::string steps = "none";        // from runs step-calibrated as this one was: none, fitted, typical
  std::string precision = "16-bit";  // from runs whose GEMMs ran in the same: 16-bit, fp8, fp4
  std::vector<std::string> outside;  // what no validated run had ("context parallelism (cp 2)")

  // The runs the band comes from: "40 H100-SXM-80GB step-calibrated fp8 runs".
  std::string runs_text() const;
};
// How runs of a step calibration kind are named before "runs": "", "step-calibrated ",
// "typical-calibrated ".
std::string steps_words(const std::string& steps);

// A GPU type's calibration as the run used it: its files, and a step calibration's factors.
struct CalibrationNote {
  std::string gpu;
  std::vector<std::string> files;
  double step_efficiency = 1, attention_step_efficiency = 1, step_overhead_s = 0;
};

struct Report {
  std::string platform, workload, plan, engine;
  int gpus = 0;
  int tasks = 0;
  double iteration_time_s = 0;  // a stopped iteration: when it stopped (it has no time)
  // A fault stopped the iteration before its end: it has no iteration time, throughput or
  // MFU (the summary says so; the JSON writes them as null).
  bool stopped = false;
  double stopped_at_s = 0;
  std::string stop_cause;
  double model_flops = 0, hardware_flops = 0;
  double tflops_per_gpu = 0, hardware_tflops_per_gpu = 0;
  double mfu = 0, hfu = 0;
  double bubble_fraction = 0;
  // Per communication stream, the GPUs' mean: what overlap hid (tp_comm_overlap, buckets,
  // prefetching gathers) and what it did not.
  std::vector<StreamCommReport> communication;
  // The GPUs' mean: compute beyond its kernels' own time, beside communication kernels that
  // hold SMs (the plan's comm_sms) or on a straggler.
  double compute_slowed_s = 0;
  // A step calibration's host time an iteration (platforms::Efficiency::step_overhead_s; the
  // largest of the platform's GPU types'), run after the optimizer step: in compute above.
  double host_overhead_s = 0;
  double peak_flops_total = 0;
  std::vector<SimulatedDeviceReport> simulated;
  std::vector<DeviceReport> devices;
  LinkReport busiest_link;
  std::vector<LinkReport> links;  // the link directions that carried most bytes, at most 15
  // Memory verdict: the fullest GPU against its capacity.
  bool oom = false;
  std::string fullest_gpu;
  double peak_memory_bytes = 0, capacity_bytes = 0;
  double shortfall_bytes = 0;  // peak - capacity when oom
  // An offloaded optimizer (plan offload): what it moves and holds; tier empty without.
  OffloadUse offload;
  std::vector<int> token_slices;  // TeraPipe's slices of each sequence (tokens); empty without
  bool token_slices_chosen = false;
  // The pipeline: until its last microbatch's task ends; an asynchronous schedule's steady
  // state (no flush), its optimizer steps per iteration, and per stage the staleness of the
  // gradients (optimizer steps between the weights they were computed on and the weights
  // they update) and the weight versions kept.
  double pipeline_s = 0;
  std::string schedule;
  bool pipeline_flush = true;
  double steady_state_period_s = 0;  // async: the pipeline's time for one iteration's microbatches
  int optimizer_steps = 1;
  int delayed_averaging = 0;  // steps the gradient exchange is hidden behind (its result that late)
  std::vector<double> staleness;
  std::vector<int> weight_versions;
  double mean_staleness = 0;
  ValidationBand validation;  // filled by the command line (simulate), not by make_report
  // An fp8 model's scaling recipe as run, per GPU type where the default resolves apart
  // ("mxfp8 (Transformer Engine's default on B200-SXM-180GB)"); empty for other dtypes.
  std::string fp8_recipe;
  std::vector<CalibrationNote> calibrations;  // --calibration files applied, by GPU type
};

Report make_report(const workloads::ModelGraph& model, const platforms::Cluster& cluster, const Plan& plan,
                   const LoweredJob& job, const sim::Result& result);

}  // namespace dejavu::strategies
