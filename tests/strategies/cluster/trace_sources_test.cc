// Where traces come from (issue 24): the synthetic generator keeps its documented
// distributions and is seeded; a Helios log converts as its schema says; a written trace
// reads back as the job mix says.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/config_node.h"
#include "strategies/cluster/shared_run.h"
#include "strategies/cluster/trace.h"
#include "strategies/cluster/trace_sources.h"
#include "tests/source_dir.h"

namespace dejavu::strategies::cluster {
namespace {

using dejavu::testing::src;

TEST(SyntheticTrace, IsSeededAndKeepsItsLoadSizesAndArrivalRate) {
  SyntheticSpec spec;
  spec.jobs = 20000;
  spec.days = 10;
  spec.cluster_gpus = 64;
  spec.load = 0.5;
  const auto a = synthetic_trace(spec), b = synthetic_trace(spec);
  ASSERT_EQ(a.size(), 20000u);
  double gpu_hours = 0;
  std::map<int, int> sizes;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].submit_s, b[i].submit_s);
    EXPECT_EQ(a[i].hours, b[i].hours);
    ++sizes[a[i].gpus];
    gpu_hours += a[i].gpus * a[i].hours;
    EXPECT_GE(a[i].hours, 2.0 / 60);
    EXPECT_LE(a[i].hours, 7 * 24.0);
  }
  // No job above the cluster's 64 GPUs; the rest in the documented shares, renormalised
  // over the sizes kept (weights sum to 0.985): 1 GPU 0.45 / 0.985.
  EXPECT_EQ(sizes.rbegin()->first, 64);
  EXPECT_NEAR(sizes[1] / 20000.0, 0.45 / 0.985, 0.01);
  EXPECT_NEAR(sizes[8] / 20000.0, 0.20 / 0.985, 0.01);
  // GPU-hours: the load of 64 GPUs over 10 days.
  EXPECT_NEAR(gpu_hours / (0.5 * 64 * 10 * 24), 1.0, 1e-9);
  // Poisson arrivals: 20000 over about 10 days.
  EXPECT_NEAR(a.back().submit_s / (10 * 86400.0), 1.0, 0.03);
  spec.seed = 2;
  const auto c = synthetic_trace(spec);
  int same = 0;
  for (size_t i = 1; i < c.size(); ++i) same += c[i].submit_s == a[i].submit_s;
  EXPECT_EQ(same, 0);
}

TEST(HeliosTrace, KeepsGpuJobsThatRanFromTheFirstOnesSubmission) {
  HeliosSpec spec;
  spec.max_gpus = 64;
  const auto rows = helios_trace(src("tests/fixtures/cluster/helios_sample.csv"), spec);
  // 101 has no GPU, 104 no duration, 105 more than 64 GPUs.
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "h102");
  EXPECT_EQ(rows[0].submit_s, 0);
  EXPECT_NEAR(rows[0].hours, 36848 / 3600.0, 1e-12);
  EXPECT_EQ(rows[1].name, "h103");
  EXPECT_EQ(rows[1].submit_s, 26);
  EXPECT_EQ(rows[1].gpus, 4);
  EXPECT_EQ(rows[2].submit_s, 86401);  // a day and a second later
  spec.days = 1;
  EXPECT_EQ(helios_trace(src("tests/fixtures/cluster/helios_sample.csv"), spec).size(), 2u);
}

TEST(TraceCsv, WrittenFromTheMixReadsBackAsTheMixSays) {
  const JobMix mix = load_job_mix_file(src("strategies/presets/cluster/job-mix.yaml"));
  const std::vector<TraceRow> rows = {{"a", 0, 4, 1.5}, {"b", 10, 16, 2}, {"c", 20, 12, 0.5}};
  const auto dir = std::filesystem::temp_directory_path() / "dejavu_trace_csv_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.csv").string();
  {
    std::ofstream out(path);
    write_trace_csv(out, rows, mix, dir.string());
  }
  const platforms::Cluster cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-8x8-2to1.yaml"));
  const Trace t = load_trace_file(path, cluster);
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.jobs[0].model->name, "gpt3-1.3b");
  EXPECT_EQ(t.jobs[0].plan.dp, 4);
  EXPECT_EQ(t.jobs[0].plan.global_batch_size, 4 * 4 * 4);
  EXPECT_EQ(t.jobs[1].model->name, "gpt3-13b");
  EXPECT_EQ(t.jobs[1].plan.tp, 8);
  EXPECT_EQ(t.jobs[1].plan.dp, 2);
  EXPECT_EQ(t.jobs[1].plan.global_batch_size, 2 * 1 * 8);
  EXPECT_EQ(t.jobs[1].plan.recompute, "selective");
  EXPECT_TRUE(t.jobs[1].plan.sequence_parallel);
  EXPECT_EQ(t.jobs[2].model->name, "gpt3-1.3b");  // 12 GPUs: not whole servers of tp 8
  EXPECT_EQ(t.jobs[2].plan.dp, 12);
  EXPECT_EQ(t.jobs[2].hours, 0.5);
  EXPECT_EQ(t.jobs[0].model, t.jobs[2].model);  // one workload file, loaded once
  std::filesystem::remove_all(dir);
}

TEST(TraceCsv, ASearchedPlanIsNoSlowerThanTheMixsOwn) {
  // GPT-3 13B on two servers, 64 sequences a step: the grid's best against the job mix's
  // tp 8, dp 2 (sequence parallel, selective recomputation), both on the same packed GPUs.
  const auto dir = std::filesystem::temp_directory_path() / "dejavu_trace_search_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.csv").string();
  std::ofstream(path) << "name,submit_s,gpus,workload,plan,global_batch,hours\n"
                      << "a,0,16," << src("workloads/presets/gpt3-13b.yaml") << ",search,64,1\n";
  const platforms::Cluster cluster = platforms::load_cluster_file(src("platforms/presets/dgx-a100-8x8-2to1.yaml"));
  const Trace t = load_trace_file(path, cluster);
  ASSERT_EQ(t.jobs.size(), 1u);
  const Plan& searched = t.jobs[0].plan;
  EXPECT_EQ(searched.gpus(), 16);
  EXPECT_EQ(searched.global_batch_size, 64);
  Plan mix;
  mix.tp = 8;
  mix.dp = 2;
  mix.global_batch_size = 64;
  mix.recompute = "selective";
  mix.sequence_parallel = true;
  const std::vector<int> packed = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const double a = run_alone(*t.jobs[0].model, searched, "a", packed, cluster, {}).run.alone_s;
  const double b = run_alone(*t.jobs[0].model, mix, "b", packed, cluster, {}).run.alone_s;
  EXPECT_LE(a, b * (1 + 1e-9));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dejavu::strategies::cluster
