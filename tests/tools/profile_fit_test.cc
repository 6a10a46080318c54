// profile-fit: a line through the simulator's stage prices recovers a known relation from
// a few profiled configurations and predicts the held-out ones.
#include "tools/profile_fit.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sim/error.h"
#include "strategies/lowering.h"
#include "workloads/generator.h"
#include "tests/source_dir.h"

namespace dejavu::tools {
namespace {

using dejavu::testing::src;

TEST(ProfileFit, RecoversAKnownRelationAndPredictsTheRest) {
  const auto cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-1x8.yaml"));
  const auto model = workloads::load_workload_file(src("workloads/presets/gpt3-13b.yaml"));
  // "Measured" = 1.25 x the simulator's price + 3 ms: a GPU 20% slower than modelled, with
  // a fixed overhead. Three profiled rows, nine predicted.
  std::vector<StageMeasurement> rows;
  for (int tp : {1, 2, 4, 8})
    for (const char* rc : {"none", "selective", "full"}) {
      StageMeasurement m;
      m.tp = tp;
      m.micro_batch = 2;
      m.recompute = rc;
      m.sequence_parallel = tp > 1;
      m.layers = 4;
      strategies::Plan p;
      p.tp = tp;
      p.micro_batch_size = 2;
      p.global_batch_size = 2;
      p.recompute = rc;
      p.sequence_parallel = tp > 1;
      double sim = 0;
      int n = 0;
      for (const auto& b : strategies::block_costs(model, cluster, p, 0))
        if (b.is_layer && n++ < 4) sim += b.time_s;
      m.seconds = 1.25 * sim + 0.003;
      rows.push_back(m);
    }
  const ProfileFit f = fit_profiles(model, cluster, rows, 3);
  EXPECT_NEAR(f.a, 1.25, 1e-9);
  EXPECT_NEAR(f.b, 0.003, 1e-9);
  EXPECT_EQ(f.train, 3);
  EXPECT_LT(f.heldout_error_fitted, 1e-9);
  EXPECT_GT(f.heldout_error_simulated, 0.15);  // the simulator alone misses by the 25% and more
}

TEST(ProfileFit, BadRowsNameTheLine) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("dejavu-pf-" + std::to_string(::getpid()) + ".csv");
  std::ofstream(p) << "tp,micro_batch,recompute,sequence_parallel,layers,seconds\n2,1,some,true,4,0.1\n";
  try {
    load_stage_measurements(p.string());
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(":2:3: recompute: \"some\"; valid: none, selective, selective-op, "
                                         "save-dot-except-mlpwi, save-qkv-proj, full"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dejavu::tools
