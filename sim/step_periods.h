// Alike steps played as time. A ring all-reduce at step fidelity is 2(n-1) steps of the same
// flows; on 1,024 GPUs that is 4 million flows. Alone on its links, such a run settles into
// a period: from some step on, every flow of a step starts and ends exactly T after the
// same flow of the step before (max-min sharing, the same flows over the same links: the
// state after one step is the state before it, shifted). A flow-level engine then plays
// only the first `keep` steps of the run (Expansion::cut) and, if the middle of what it
// played was periodic, adds the cut steps as (steps cut) x T after the last flow: the same
// end as playing them all, to SimGrid's timing precision. Where the kept steps are not
// periodic, the task is played again in full.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/collective.h"

namespace dejavu::sim {

class StepPeriods {
 public:
  explicit StepPeriods(const Expansion& exp);

  void started(int32_t flow, double t);
  // Records a flow's end. Returns the run (index into Expansion::cut) whose window edge this
  // flow closed, the first edge as 2·run, the second as 2·run + 1; -1 otherwise. Between the
  // two edges lie window_steps(run) periods.
  int ended(int32_t flow, double t);
  int window_steps(int run) const;

  // After every flow ended: the time the cut steps take (sum over the runs of steps cut x
  // period), or a negative value if some run's window was not periodic.
  double cut_time_s() const;
  // Per run: its steps cut over its window's steps (how many windows the cut steps make).
  double cut_windows(int run) const;

 private:
  struct Run {
    AlikeSteps steps;
    int lo = 0, hi = 0;            // the window: the ends of step lo and step hi
    std::vector<int32_t> pending;  // per kept step: flows not ended
  };
  int run_of(int32_t flow) const;
  bool periodic(const Run& r, double period) const;

  std::vector<Run> runs_;
  std::vector<double> start_, end_;  // per flow of the expansion
};

}  // namespace dejavu::sim
