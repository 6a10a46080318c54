// What every program in bench/ needs before it runs: the registries, and the source tree.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <utility>

#include "sim/engine.h"
#include "strategies/builtins.h"
#include "strategies/search/searcher.h"
#include "strategies/cluster/placement.h"
#include "strategies/training/builtins.h"
#include "workloads/generator.h"

namespace dejavu::bench {

inline void register_all() {
  sim::register_builtins();
  workloads::register_builtins();
  strategies::register_builtins();
  strategies::search::register_searchers();
  strategies::register_training();
  strategies::cluster::register_placement_policies();
}

inline std::string src(const std::string& rel) { return std::string(DEJAVU_SOURCE_DIR) + "/" + rel; }

struct Measured {
  double wall_s = 0, peak_mib = 0, answer = 0, activities = 0;
};

// Runs `work` in a child; its wall time, peak resident memory (its own and its children's:
// the SimGrid engine forks again), and the two numbers it returns.
template <class Work>
Measured in_child(Work&& work) {
  int fd[2];
  if (::pipe(fd) != 0) return {};
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fd[0]);
    const std::pair<double, double> r = work();
    const double out[2] = {r.first, r.second};
    if (::write(fd[1], out, sizeof out) != sizeof out) ::_exit(1);
    ::_exit(0);
  }
  ::close(fd[1]);
  double got[2] = {0, 0};
  const bool read_all = ::read(fd[0], got, sizeof got) == sizeof got;
  ::close(fd[0]);
  int status = 0;
  rusage u{};
  ::wait4(pid, &status, 0, &u);
  Measured m;
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.peak_mib = u.ru_maxrss / 1024.0;  // kilobytes on Linux
  if (read_all && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    m.answer = got[0];
    m.activities = got[1];
  }
  return m;
}

}  // namespace dejavu::bench
