// Time to accuracy: real training of a small model on synthetic data by N simulated
// workers, each step's timing taken from simulating the plan on the platform, so a slow
// GPU or link makes its worker's updates late and a cheaper sync topology makes steps
// shorter. The update rule decides how the workers' real gradients combine:
//   sync       all-reduce (or a synchronous parameter server): the aggregate of every
//              worker's gradient, one step per simulated iteration
//   ps-async   asynchronous parameter server with bounded staleness: each worker pushes the
//              gradient of the weights it pulled; a worker more than `staleness` steps ahead
//              of the slowest waits
//   gossip     each worker keeps its own model, steps on its own gradient and averages with
//              `peers` seeded-random others per step, or on a ring with both neighbours
//              (the loss is the workers' average model's; the curve records their consensus)
//   pipedream  PipeDream-style weight staleness: gradients of the weights of pp - 1 steps ago
//   delayed    delayed gradient averaging: the average arrives `delay` steps late (hidden
//              behind those steps), each worker applying its own gradient meanwhile
// Compression (from the plan: topk with error feedback, powersgd, 1bit with error feedback,
// terngrad) is applied to the real gradients. Byzantine workers (from a fault scenario)
// send corrupted gradients; the aggregator is mean, median (coordinate-wise), trimmed
// mean, Krum or Zeno. Models: multinomial logistic regression and a two-layer ReLU MLP,
// written with Eigen.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "strategies/faults.h"

namespace dejavu::strategies {

struct ConvergenceData {
  int classes = 10, dim = 64;
  int samples_per_worker = 512;
  double separation = 4.0;  // distance between class means, in noise standard deviations
  double skew = 0;          // 0: iid shards; 1: each worker sees only its home classes
  double imbalance = 1;     // the commonest class this many times the rarest (geometric in between)
  unsigned long long seed = 1;
};
// "synthetic:classes=10,dim=64,skew=0.5,imbalance=10" -> fields; throws ConfigError naming the key.
ConvergenceData parse_data_spec(const std::string& spec);

// A worker stopping for good at a simulated time (a failed GPU or server of its replica).
struct WorkerFailure {
  double at_s = 0;
  int worker = 0;
};

struct ConvergenceConfig {
  std::string model = "logistic";  // logistic | mlp
  int hidden = 64;                 // mlp
  ConvergenceData data;
  int workers = 8;
  std::string rule = "sync";               // sync | ps-async | gossip | pipedream | delayed
  int staleness = 4;                       // ps-async bound; pipedream: pp - 1
  int peers = 1;                           // gossip
  std::string gossip_topology = "random";  // random (peers seeded-random partners) | ring (both neighbours)
  bool independent_init = false;           // each worker starts from its own seeded initialisation
  int delay = 2;                           // delayed averaging
  std::string compression = "none";
  double density = 0.01;            // topk
  int rank = 4;                     // powersgd
  std::string aggregator = "mean";  // mean | median | trimmed | krum | zeno
  int trim = 1;                     // trimmed mean: drop b high and low; krum/zeno: b suspected
  std::vector<ByzantineWorker> byzantine;
  // Fail-stops and the scenario's recovery: checkpoint (everyone rolls back to the last
  // checkpoint after restart_s), spares (the same after swap_s while hot spares last),
  // elastic (synchronous rules roll back and go on without the worker; gossip, delayed
  // averaging and the asynchronous server just go on without it).
  std::vector<WorkerFailure> failures;
  Recovery recovery;
  long checkpoint_every = 0;  // steps between checkpoints; 0: only the starting weights
  // Parallel random initialisation: `init_candidates` seeded initialisations, each trained
  // by its share of the workers for `probe_steps`; the `keep` best (and, with resample > 0,
  // that many perturbations of the best, noise `resample` times the weights' scale) probe
  // once more, and all workers go on from the best.
  int init_candidates = 1;
  int probe_steps = 20;
  int keep = 1;
  double resample = 0;
  double learning_rate = 0.5;
  int batch = 32;  // per worker per step
  int max_steps = 3000;
  double target_loss = 0.3;
  int eval_every = 10;
  unsigned long long seed = 1;
};

// When each worker's steps take place: the simulated iteration (every worker waits for the
// slowest) and each worker's own compute and communication (its replica's devices).
struct WorkerTiming {
  double iteration_s = 1;
  std::vector<double> compute_s;  // per worker
  double communication_s = 0;     // what a step spends beyond compute, fault-free
  double delayed_step_s = 0;      // the simulated steady state with delayed averaging (0: not simulated)
};

struct CurvePoint {
  double time_s = 0;
  long step = 0;
  double loss = 0, accuracy = 0;
  double consensus = 0;  // local-model rules: RMS distance of the workers' models from their mean
};

struct ConvergenceResult {
  std::string name;
  std::vector<CurvePoint> curve;
  bool reached = false;
  double time_to_target_s = 0;
  long steps_to_target = 0;
  double mean_staleness = 0;
  int failures = 0;       // fail-stops met
  double downtime_s = 0;  // restarts and swaps
  long steps_lost = 0;    // rolled back to a checkpoint
  int workers_left = 0;
  std::vector<double> probe_losses;  // parallel initialisation: each candidate's loss after the first probe
  int chosen_init = 0;               // the candidate all workers went on from
};

// Throws a ConfigError naming the option when the configuration cannot train: training data
// past 1e8 numbers, a batch larger than a shard, an aggregator's b out of its range.
void check_config(const ConvergenceConfig& config);
ConvergenceResult train_to_target(const ConvergenceConfig& config, const WorkerTiming& timing, const std::string& name);

// The largest relative difference between the model's analytic gradient and central finite
// differences, at a seeded random point on seeded random data (a test of the models).
double gradient_check(const std::string& model, int dim, int classes, int hidden, unsigned long long seed);

}  // namespace dejavu::strategies
