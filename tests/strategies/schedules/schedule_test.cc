#include <gtest/gtest.h>

#include <algorithm>

#include "strategies/schedules/gpipe.h"
#include "strategies/schedules/interleaved_one_f_one_b.h"
#include "strategies/schedules/one_f_one_b.h"

namespace dejavu::strategies {
namespace {

// Most microbatches whose forward ran and whose backward has not: activations held.
int max_in_flight(const std::vector<WorkItem>& order) {
  int live = 0, most = 0;
  for (const WorkItem& w : order) {
    live += w.backward ? -1 : 1;
    most = std::max(most, live);
  }
  return most;
}

void expect_complete(const std::vector<WorkItem>& order, int m, int chunks = 1) {
  ASSERT_EQ(order.size(), static_cast<size_t>(2 * m * chunks));
  std::vector<int> f(m * chunks, -1), b(m * chunks, -1);
  for (size_t i = 0; i < order.size(); ++i)
    (order[i].backward ? b : f)[order[i].chunk * m + order[i].microbatch] = static_cast<int>(i);
  for (int j = 0; j < m * chunks; ++j) {
    EXPECT_GE(f[j], 0);
    EXPECT_GT(b[j], f[j]) << "backward before forward for item " << j;
  }
}

TEST(OneFOneB, HoldsAtMostPMinusIMicrobatchesOnStageI) {
  const int p = 4, m = 8;
  for (int i = 0; i < p; ++i) {
    const auto order = OneFOneB().order(i, p, m, 1);
    expect_complete(order, m);
    EXPECT_EQ(max_in_flight(order), p - i) << "stage " << i;
  }
}

TEST(OneFOneB, FewerMicrobatchesThanStagesStillCompletes) {
  const auto order = OneFOneB().order(0, 8, 3, 1);
  expect_complete(order, 3);
  EXPECT_EQ(max_in_flight(order), 3);
}

TEST(GPipe, HoldsAllMicrobatches) {
  const auto order = GPipe().order(2, 4, 6, 1);
  expect_complete(order, 6);
  EXPECT_EQ(max_in_flight(order), 6);
}

TEST(InterleavedOneFOneB, RunsEveryChunkOfEveryMicrobatchWithMegatronsWarmUp) {
  const int p = 4, m = 8, v = 2;
  for (int i = 0; i < p; ++i) {
    const auto order = InterleavedOneFOneB().order(i, p, m, v);
    expect_complete(order, m, v);
    int warmup = 0;
    while (!order[warmup].backward) ++warmup;
    EXPECT_EQ(warmup, (p - i - 1) * 2 + (v - 1) * p + 1) << "stage " << i;  // + the first steady forward
    // chunks come in groups of p microbatches: 0..3 on chunk 0, then 0..3 on chunk 1
    EXPECT_EQ(order[p].chunk, 1);
    EXPECT_EQ(order[p].microbatch, 0);
  }
}

}  // namespace
}  // namespace dejavu::strategies
