// Asynchronous pipelines without a flush (Narayanan et al.): the per-GPU order is 1F1B's,
// repeated across iterations, so in steady state no stage waits for a fill or a drain.
//   PipeDream (SOSP 2019, weight stashing): every microbatch is a minibatch; stage i steps its
//   optimizer after each backward and keeps one weight version per microbatch in flight,
//   p - i of them; a gradient is p - i - 1 steps stale.
//   PipeDream-2BW (ICML 2021): one step per iteration of m microbatches, gradients one step
//   stale, two weight versions (double-buffered) on every stage.
#pragma once

#include "strategies/schedules/one_f_one_b.h"

namespace dejavu::strategies {

class PipeDream : public OneFOneB {
 public:
  bool flushes() const override { return false; }
  int weight_versions(int stage, int stages) const override { return stages - stage; }
  double staleness(int stage, int stages) const override { return stages - stage - 1; }
  bool steps_every_microbatch() const override { return true; }
};

class PipeDream2BW : public OneFOneB {
 public:
  bool flushes() const override { return false; }
  int weight_versions(int, int stages) const override { return stages > 1 ? 2 : 1; }
  double staleness(int, int stages) const override { return stages > 1 ? 1 : 0; }
};

}  // namespace dejavu::strategies
