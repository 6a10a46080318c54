// `dejavu shard` as a user meets it: the ILP's assignment of a layer, checked against every
// assignment by --check, written as JSON; a budget too small is one line, exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/tools/cli_run.h"

namespace {

namespace fs = std::filesystem;
using namespace dejavu::testing;  // src, slurp, scratch, run_dejavu(), CliRun

const std::string kPlatform = "--platform " + src("platforms/presets/dgx-a100-1x8.yaml");

TEST(ShardCli, LlamaLayerTheIlpAndBruteForceAgreeAndNoReferenceIsFaster) {
  const fs::path json = scratch() / "shard.json";
  const CliRun r = run_dejavu("shard " + kPlatform + " --workload " + src("workloads/presets/llama3-8b.yaml") +
                              " --check --json " + json.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("(the ILP's optimum)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("found: "), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  const double t = j["layer_time_s"].get<double>();
  EXPECT_NEAR(j["brute_force_layer_time_s"].get<double>(), t, 1e-12);
  ASSERT_GE(j["references"].size(), 2u);  // Megatron, with sequence parallelism
  for (const auto& ref : j["references"]) EXPECT_GE(ref["layer_time_s"].get<double>(), t * (1 - 1e-12));
  EXPECT_EQ(j["operators"].size(), 9u);  // the input and a Llama layer's eight operators
}

TEST(ShardCli, ABudgetNothingFitsInIsOneLineAndWritesNothing) {
  const fs::path json = scratch() / "none.json";
  fs::remove(json);
  const CliRun r = run_dejavu("shard " + kPlatform + " --workload " + src("workloads/presets/gpt3-13b.yaml") +
                              " --memory-budget \"1 MB\" --json " + json.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("no sharding of a gpt3-13b layer fits in 1 MB per GPU"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(json));
}

}  // namespace
