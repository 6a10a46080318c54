#include "sim/process_pool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>

namespace dejavu::sim {
namespace {

TEST(ProcessPool, EveryJobRunsOnceAndHandsBackItsOutputAndExitCode) {
  std::map<size_t, ChildOutcome> seen;
  run_children(
      7, PoolOptions{3, 0, {}},
      [](size_t i, int out) {
        const std::string text = "job " + std::to_string(i);
        return ::write(out, text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? static_cast<int>(i) : 99;
      },
      [&](size_t i, ChildOutcome o) { EXPECT_TRUE(seen.emplace(i, std::move(o)).second) << "job " << i << " twice"; });
  ASSERT_EQ(seen.size(), 7u);
  for (const auto& [i, o] : seen) {
    EXPECT_EQ(o.output, "job " + std::to_string(i));
    EXPECT_EQ(o.exit_code, static_cast<int>(i));
    EXPECT_FALSE(o.timed_out);
    EXPECT_EQ(o.signal, 0);
  }
}

TEST(ProcessPool, NeverRunsMoreThanItsWorkers) {
  size_t most = 0;
  PoolOptions o{2, 0, [&](size_t running) { most = std::max(most, running); }};
  size_t ended = 0;
  run_children(
      6, o, [](size_t, int) { return 0; }, [&](size_t, ChildOutcome) { ++ended; });
  EXPECT_EQ(ended, 6u);
  EXPECT_LE(most, 2u);
}

TEST(ProcessPool, ACrashAndAHangEndTheirOwnJobOnlyWithTheReasonAndStderr) {
  std::map<size_t, ChildOutcome> seen;
  run_children(
      3, PoolOptions{3, 0.3, {}},
      [](size_t i, int) {
        if (i == 0) {
          std::fprintf(stderr, "first line\nwhat went wrong\n");
          std::fflush(stderr);
          std::raise(SIGABRT);
        }
        if (i == 1)
          for (;;) ::pause();
        return 0;
      },
      [&](size_t i, ChildOutcome o) { seen[i] = std::move(o); });
  EXPECT_EQ(seen[0].signal, SIGABRT);
  EXPECT_EQ(seen[0].stderr_tail, ": what went wrong");
  EXPECT_TRUE(seen[1].timed_out);
  EXPECT_EQ(seen[2].exit_code, 0);
  EXPECT_FALSE(seen[2].timed_out);
}

TEST(ProcessPool, AThrowingJobExitsWithoutOutput) {
  ChildOutcome seen;
  run_children(
      1, PoolOptions{}, [](size_t, int) -> int { throw 42; }, [&](size_t, ChildOutcome o) { seen = std::move(o); });
  EXPECT_EQ(seen.exit_code, 3);
  EXPECT_TRUE(seen.output.empty());
}

// What a job threw reaches the parent: a validation worker's failure names its cause.
TEST(ProcessPool, AThrownExceptionsMessageIsTheStderrTail) {
  ChildOutcome seen;
  run_children(
      1, PoolOptions{}, [](size_t, int) -> int { throw std::runtime_error("row 7: no such GPU"); },
      [&](size_t, ChildOutcome o) { seen = std::move(o); });
  EXPECT_EQ(seen.exit_code, 3);
  EXPECT_EQ(seen.stderr_tail, ": row 7: no such GPU");
}

}  // namespace
}  // namespace dejavu::sim
