#include <gtest/gtest.h>

#include <algorithm>

#include "strategies/schedules/gpipe.h"
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

void expect_complete(const std::vector<WorkItem>& order, int m) {
  ASSERT_EQ(order.size(), static_cast<size_t>(2 * m));
  std::vector<int> f(m, -1), b(m, -1);
  for (size_t i = 0; i < order.size(); ++i) (order[i].backward ? b : f)[order[i].microbatch] = i;
  for (int j = 0; j < m; ++j) {
    EXPECT_GE(f[j], 0);
    EXPECT_GT(b[j], f[j]) << "backward before forward for microbatch " << j;
  }
}

TEST(OneFOneB, HoldsAtMostPMinusIMicrobatchesOnStageI) {
  const int p = 4, m = 8;
  for (int i = 0; i < p; ++i) {
    const auto order = OneFOneB().order(i, p, m);
    expect_complete(order, m);
    EXPECT_EQ(max_in_flight(order), p - i) << "stage " << i;
  }
}

TEST(OneFOneB, FewerMicrobatchesThanStagesStillCompletes) {
  const auto order = OneFOneB().order(0, 8, 3);
  expect_complete(order, 3);
  EXPECT_EQ(max_in_flight(order), 3);
}

TEST(GPipe, HoldsAllMicrobatches) {
  const auto order = GPipe().order(2, 4, 6);
  expect_complete(order, 6);
  EXPECT_EQ(max_in_flight(order), 6);
}

}  // namespace
}  // namespace dejavu::strategies
