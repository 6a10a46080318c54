// Runs one simulation in a forked child and hands its Result back to the parent. SimGrid's
// engine runs once per process, so a caller that needs many SimGrid runs (tests, search,
// compare-engines) gives each its own process. A child that throws, crashes or outlives
// its timeout becomes an Error for that run, never for the caller.
#pragma once

#include <functional>

#include "sim/engine.h"

namespace dejavu::sim {

// timeout_s <= 0: wait for ever.
Result run_in_child(const std::function<Result()>& simulate, double timeout_s = 0);

}  // namespace dejavu::sim
