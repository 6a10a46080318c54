// Placement policies on eight servers of two GPUs, in two units (leaves) of four.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "strategies/cluster/placement.h"

#include "platforms/cluster.h"

namespace dejavu::strategies::cluster {
namespace {

ClusterShape eight_by_two() {
  ClusterShape s;
  s.servers_per_unit = 4;
  for (int k = 0; k < 8; ++k) s.server_gpus.push_back({2 * k, 2 * k + 1});
  return s;
}

std::vector<int> place(const std::string& policy, const std::vector<char>& free, int count, uint64_t seed = 1) {
  sim::Rng rng(seed);
  return placement_policies().make(policy)->place(eight_by_two(), free, count, rng);
}

std::vector<char> all_free() { return std::vector<char>(16, 1); }

// A job's view of its GPUs takes its plan's gpu_order: on the A100 + H100 cluster, a job on
// GPUs 4-11 (four of each) ranks the H100s first when its plan asks, else in cluster order.
TEST(Placement, AJobsGpusFollowItsPlansGpuOrder) {
  const platforms::Cluster c =
      platforms::load_cluster_file(std::string(DEJAVU_SOURCE_DIR) + "/platforms/presets/mixed-a100-h100-2x8.yaml");
  const std::vector<int> gpus = {4, 5, 6, 7, 8, 9, 10, 11};
  const platforms::Cluster plain = job_cluster(c, gpus), h100_first = job_cluster(c, gpus, {"H100-SXM-80GB"});
  ASSERT_EQ(h100_first.gpu_count(), 8);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(plain.gpus[i].host, c.gpus[gpus[i]].host);
    EXPECT_EQ(h100_first.gpus[i].spec->name, i < 4 ? "H100-SXM-80GB" : "A100-SXM-80GB");
    EXPECT_EQ(h100_first.gpus[i].host, c.gpus[gpus[(i + 4) % 8]].host);  // in order within a type
  }
}

TEST(Placement, FirstFitTakesTheLowestFreeGpus) {
  std::vector<char> free = all_free();
  free[1] = 0;
  EXPECT_EQ(place("first-fit", free, 3), (std::vector<int>{0, 2, 3}));
  EXPECT_TRUE(place("first-fit", free, 16).empty());
}

TEST(Placement, TopologyAwareFillsTheFullestServerOrUnitThatHoldsTheJob) {
  std::vector<char> free = all_free();
  for (int g = 0; g < 6; ++g) free[g] = 0;  // servers 0-2 busy: unit 0 has server 3 free
  // Two GPUs: servers 3..7 each hold them; server 3's unit has the fewest free GPUs.
  EXPECT_EQ(place("topology-aware", free, 2), (std::vector<int>{6, 7}));
  // Four: no server holds them; unit 1 (8 free) does, its first servers.
  EXPECT_EQ(place("topology-aware", free, 4), (std::vector<int>{8, 9, 10, 11}));
  // First-fit splits that job across the units.
  EXPECT_EQ(place("first-fit", free, 4), (std::vector<int>{6, 7, 8, 9}));
  // Ten on an empty cluster: no unit holds them; the units with most free first.
  std::vector<int> want(10);
  for (int g = 0; g < 10; ++g) want[g] = g;
  EXPECT_EQ(place("topology-aware", all_free(), 10), want);
}

TEST(Placement, RandomIsSeededAndTakesWholeServersFree) {
  const std::vector<int> a = place("random", all_free(), 6, 7), b = place("random", all_free(), 6, 7);
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), 6u);
  std::set<int> servers;
  for (int g : a) servers.insert(g / 2);
  EXPECT_EQ(servers.size(), 3u);
  bool differs = false;
  for (uint64_t seed = 1; seed < 20 && !differs; ++seed) differs = place("random", all_free(), 6, seed) != a;
  EXPECT_TRUE(differs);
  EXPECT_EQ(place("random", all_free(), 16, 3).size(), 16u);
}

}  // namespace
}  // namespace dejavu::strategies::cluster
