// Fault scenarios: what goes wrong, when, and how the job recovers.
//
//   seed: 7
//   events:
//     - {kind: straggler, device: 3, speed: 0.5}            # whole run unless from/to given
//     - {kind: link_degrade, link: server1/gpu0/nic, factor: 0.25, from: 2 s, to: 5 s}
//     - {kind: link_down, link: server0/gpu3/nic, from: 1 s, to: 2 s}   # back up at `to`
//     - {kind: gpu_fail, device: 12, at: 1.5 s}
//     - {kind: server_fail, server: 1, at: 3 s}
//     - {kind: random_failures, mtbf: 50000 h}             # per GPU, exponential, seeded
//     - {kind: byzantine, device: 5, mode: sign_flip}      # sign_flip | scale | random
//   recovery: {policy: checkpoint, interval: 30 min, restart: 10 min, spares: 0, swap: 1 min}
//
// `device` is a GPU's index in the platform (server order), `link` a network link's name
// (`dejavu export-platform` lists them). Times are from the start of the run.
#pragma once

#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "sim/config_node.h"
#include "sim/faults.h"

namespace dejavu::strategies {

struct FaultEvent {
  std::string kind;                       // straggler | link_degrade | link_down | gpu_fail | server_fail
  int gpu = -1;                           // straggler, gpu_fail
  int server = -1;                        // server_fail
  int link = -1;                          // link_degrade, link_down
  double from_s = 0, to_s = 0, at_s = 0;  // to_s infinite: until the end
  double factor = 1;                      // straggler speed, link bandwidth factor
};

struct ByzantineWorker {
  int gpu = -1;
  std::string mode = "sign_flip";  // sign_flip | scale | random
  double factor = -1;              // scale: the gradient times this
};

struct Recovery {
  std::string policy = "checkpoint";  // a recovery policy (strategies/recovery/)
  double interval_s = 0;              // checkpoint interval; 0: the best one (searched)
  double restart_s = 600;             // rescheduling and process start after a failure
  int spares = 0;                     // hot spares (policy spares)
  double swap_s = 60;                 // a hot spare taking over, instead of restart_s
};

struct FaultScenario {
  std::string file;
  unsigned long long seed = 1;
  std::vector<FaultEvent> events;
  double mtbf_s = 0;  // per GPU; 0: no random failures
  std::vector<ByzantineWorker> byzantine;
  Recovery recovery;

  // GPUs a timed event touches (stragglers, failed GPUs and servers): lowering keeps
  // their replicas apart from the symmetric ones.
  std::vector<int> faulty_gpus(const platforms::Cluster& cluster) const;
};

// Throws ConfigError naming the file, the event and what would be valid.
FaultScenario load_fault_scenario(const ConfigNode& root, const platforms::Cluster& cluster);
FaultScenario load_fault_scenario_file(const std::string& path, const platforms::Cluster& cluster);

// The timed events as the engines take them. Random failures are drawn (seeded) over
// [0, horizon_s) and become fail-stops too.
sim::Faults engine_faults(const FaultScenario& scenario, const platforms::Cluster& cluster, double horizon_s);

}  // namespace dejavu::strategies
