// One process pool for everything that runs work in forked children: a SimGrid run (its
// engine runs once per process), a sweep's points. Each job runs body(index, out_fd) in a
// child of its own, at most `workers` at once; what the child writes to out_fd and how it
// ended (exit code, signal, timeout, the last line it wrote on stderr) come back to done().
// A child dies with its parent (PR_SET_PDEATHSIG), so a killed caller leaves no workers.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace dejavu::sim {

struct ChildOutcome {
  std::string output;       // everything the child wrote to out_fd
  bool timed_out = false;   // killed at the pool's timeout
  int exit_code = -1;       // when it exited
  int signal = 0;           // when a signal ended it
  std::string stderr_tail;  // ": <its last stderr line>", or empty
};

struct PoolOptions {
  int workers = 1;
  double timeout_s = 0;                      // per child, from its start; <= 0: none
  std::function<void(size_t running)> tick;  // called between waits (progress bars)
};

// Writes all of data to a child's out_fd (a pipe); false when the pipe closed first.
bool write_all(int fd, const std::string& data);

// Runs jobs 0..jobs-1; done(i, outcome) is called in the parent as each child ends, in the
// order they end. A job that throws exits with code 3, a std::exception's what() its last
// stderr line. The child's stdout and stdio buffers are flushed before each fork.
void run_children(size_t jobs, const PoolOptions& o, const std::function<int(size_t index, int out_fd)>& body,
                  const std::function<void(size_t index, ChildOutcome outcome)>& done);

}  // namespace dejavu::sim
