// Sweeps: shards partition the points, a killed sweep resumes to the same table without
// simulating a point twice, a point with an impossible plan fails alone.
#include "tools/sweep.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "sim/error.h"
#include "tests/tools/cli_run.h"

namespace {

namespace fs = std::filesystem;
using namespace dejavu::testing;  // src, slurp, scratch, run_dejavu(), CliRun

// A sweep file `name` with `body` after its name, in a scratch folder of that name.
fs::path write_sweep_file(const std::string& name, const std::string& body) {
  const fs::path dir = scratch() / name;
  fs::create_directories(dir);
  const fs::path file = dir / "sweep.yaml";
  std::ofstream(file) << "name: " << name << "\n" << body;
  return file;
}

// One over GPT-3 1.3B on a DGX A100 with the dp8-pcie plan, then `body`.
fs::path write_sweep(const std::string& name, const std::string& body) {
  return write_sweep_file(name, "platform: " + src("platforms/presets/dgx-a100-1x8.yaml") +
                                    "\nworkload: " + src("workloads/presets/gpt3-1.3b.yaml") +
                                    "\nplan: " + src("strategies/presets/dp8-pcie.yaml") + "\n" + body);
}

std::map<std::string, std::string> point_files(const fs::path& out) {
  std::map<std::string, std::string> files;
  if (!fs::exists(out / "points")) return files;
  for (const auto& e : fs::directory_iterator(out / "points"))
    if (e.path().extension() == ".json") files[e.path().filename().string()] = slurp(e.path());
  return files;
}

TEST(Sweep, ShardsPartitionThePoints) {
  const fs::path file =
      write_sweep("shards", "axes:\n  workload.layers: {from: 2, to: 12, step: 1}\n  plan.micro_batch_size: [1, 2]\n");
  const dejavu::tools::SweepSpec spec = dejavu::tools::load_sweep(file.string());
  ASSERT_EQ(spec.points(), 22u);
  const fs::path out = file.parent_path() / "out";
  fs::remove_all(out);
  size_t total = 0;
  for (int i = 0; i < 5; ++i) {
    const CliRun r =
        run_dejavu("sweep " + file.string() + " --jobs 2 --shard " + std::to_string(i) + "/5 -o " + out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    total = point_files(out).size();
  }
  EXPECT_EQ(total, 22u);  // every point once: one file per point, none missing
  std::set<std::string> keys;
  for (const auto& [name, text] : point_files(out)) keys.insert(text.substr(text.find("\"key\"")));
  EXPECT_EQ(keys.size(), 22u);
  // And a rerun of any shard finds its points done.
  const CliRun again = run_dejavu("sweep " + file.string() + " --shard 3/5 -o " + out.string());
  EXPECT_NE(again.out.find("0 simulated, 0 failed, 4 already done"), std::string::npos) << again.out;
}

TEST(Sweep, AKilledSweepResumesToTheSameTableWithoutRedoingAPoint) {
  const std::string axes = "axes:\n  workload.layers: {from: 1, to: 48, step: 1}\n";
  const fs::path file = write_sweep("resume", axes);
  const fs::path out = file.parent_path() / "out", whole = file.parent_path() / "whole";
  fs::remove_all(out);
  fs::remove_all(whole);
  // Start it, wait for a few points, kill the sweep (its workers die with it).
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    const std::string o = out.string(), f = file.string();
    ::execl(DEJAVU_BINARY, DEJAVU_BINARY, "sweep", f.c_str(), "--jobs", "2", "-o", o.c_str(), "--no-progress",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (point_files(out).size() < 6 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto before = point_files(out);
  ASSERT_GE(before.size(), 6u);
  ASSERT_LT(before.size(), 48u) << "the sweep finished before it could be killed";
  const CliRun resumed = run_dejavu("sweep " + file.string() + " --jobs 2 -o " + out.string());
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find(std::to_string(48 - before.size()) + " simulated, 0 failed, " +
                             std::to_string(before.size()) + " already done"),
            std::string::npos)
      << resumed.out;
  const auto after = point_files(out);
  EXPECT_EQ(after.size(), 48u);
  for (const auto& [name, text] : before) EXPECT_EQ(after.at(name), text) << name << " was simulated again";
  // The same table as a sweep never interrupted.
  ASSERT_EQ(run_dejavu("sweep " + file.string() + " --jobs 2 -o " + whole.string()).code, 0);
  ASSERT_EQ(run_dejavu("sweep-merge " + out.string() + " -o " + (out / "t.csv").string()).code, 0);
  ASSERT_EQ(run_dejavu("sweep-merge " + whole.string() + " -o " + (whole / "t.csv").string()).code, 0);
  const std::string table = slurp(out / "t.csv");
  EXPECT_EQ(table, slurp(whole / "t.csv"));
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 49);  // a header and 48 points
}

TEST(Sweep, AnImpossiblePlanFailsAloneAndTheRestFinish) {
  const fs::path file = write_sweep("impossible", "axes:\n  plan.tp: [1, 3, 8]\n");
  const fs::path out = file.parent_path() / "out";
  fs::remove_all(out);
  const CliRun r = run_dejavu("sweep " + file.string() + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("2 simulated, 1 failed"), std::string::npos) << r.out;
  ASSERT_EQ(run_dejavu("sweep-merge " + out.string() + " -o " + (out / "t.csv").string() + " --plot " +
                       (out / "t.svg").string())
                .code,
            0);
  const std::string csv = slurp(out / "t.csv");
  EXPECT_NE(csv.find("3,failed,,,,,,,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("does not divide the 16 attention heads"), std::string::npos) << csv;
  EXPECT_NE(slurp(out / "t.svg").find("<polyline"), std::string::npos);
}

// A plan whose offloaded activations the servers' CPU memory cannot hold does not fit: Llama 3
// 8B with 8 layers offloaded on a DGX B200 keeps 148 GB a GPU, and one microbatch's 8 layers
// a GPU (292 GB a server) in CPU memory, under 2 TB and over 100 GB.
TEST(Sweep, APlanTheHostCannotHoldIsOutOfMemory) {
  const fs::path file =
      write_sweep_file("host", "platform: " + src("platforms/presets/dgx-b200-1x8.yaml") +
                                   "\nworkload: " + src("workloads/presets/llama3-8b.yaml") +
                                   "\nplan: " + src("strategies/presets/dp8-zero3-offload-layers.yaml") +
                                   "\naxes:\n  platform.servers[0].host.memory: [100 GB, 2 TB]\n");
  const fs::path out = file.parent_path() / "out";
  fs::remove_all(out);
  ASSERT_EQ(run_dejavu("sweep " + file.string() + " -o " + out.string()).code, 0);
  ASSERT_EQ(run_dejavu("sweep-merge " + out.string() + " -o " + (out / "t.csv").string()).code, 0);
  const std::string csv = slurp(out / "t.csv");
  EXPECT_NE(csv.find("100 GB,ok,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",true,tp1 pp1 dp8 mb4 zero3 activations=cpu/8-layers"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",false,tp1 pp1 dp8 mb4 zero3 activations=cpu/8-layers"), std::string::npos) << csv;
  EXPECT_LT(csv.find(",true,"), csv.find(",false,")) << csv;  // 100 GB is the first point
}

TEST(Sweep, SearchModeFindsAPlanPerPoint) {
  const fs::path file = write_sweep_file(
      "searched", "platform: " + src("platforms/presets/dgx-a100-1x8.yaml") +
                      "\nworkload: " + src("workloads/presets/gpt3-1.3b.yaml") +
                      "\nsearch: grid\nglobal_batch: 32\naxes:\n  platform.servers[0].gpu: [A100-SXM-80GB, "
                      "H100-SXM-80GB]\n");
  const fs::path out = file.parent_path() / "out";
  fs::remove_all(out);
  ASSERT_EQ(run_dejavu("sweep " + file.string() + " -o " + out.string()).code, 0);
  ASSERT_EQ(run_dejavu("sweep-merge " + out.string() + " -o " + (out / "t.csv").string()).code, 0);
  const std::string csv = slurp(out / "t.csv");
  EXPECT_NE(csv.find("A100-SXM-80GB,ok,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("H100-SXM-80GB,ok,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("tp1 pp1 dp8"), std::string::npos) << csv;  // the searched plan is in the table
}

TEST(Sweep, APointPastItsTimeoutIsRecordedAsFailed) {
  // Slow by construction: GPT-3 175B on 1024 GPUs on SimGrid takes tens of seconds, a
  // hundred times the 0.3 s timeout, however fast the machine.
  const fs::path dir = scratch() / "timeout";
  fs::create_directories(dir);
  const fs::path file = dir / "sweep.yaml";
  std::ofstream(file) << "name: timeout\nplatform: " << src("platforms/presets/dgx-a100-128x8.yaml")
                      << "\nworkload: " << src("workloads/presets/gpt3-175b.yaml")
                      << "\nplan: " << src("strategies/presets/tp8-pp16-dp8-1f1b.yaml")
                      << "\nengine: simgrid\ntimeout: 300 ms\naxes:\n  plan.micro_batch_size: [1, 2]\n";
  const fs::path out = file.parent_path() / "out";
  fs::remove_all(out);
  const CliRun r = run_dejavu("sweep " + file.string() + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("0 simulated, 2 failed"), std::string::npos) << r.out;
  for (const auto& [name, text] : point_files(out)) EXPECT_NE(text.find("timed out after"), std::string::npos) << text;
}

TEST(Sweep, TheSlurmArrayScriptsTasksTogetherMakeTheWholeTable) {
  // strategies/presets/sweeps/slurm-array.sh as Slurm runs it: two array tasks, each its
  // shard, then one merge; the same table as one unsharded sweep.
  const fs::path dir = scratch() / "slurm";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string sweep = src("strategies/presets/sweeps/gpu-vs-network-2d.yaml");
  for (int task : {0, 1}) {
    const std::string cmd = "cd " + src("") + " && DEJAVU=" + DEJAVU_BINARY +
                            " SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_ID=" + std::to_string(task) +
                            " bash strategies/presets/sweeps/slurm-array.sh " + sweep + " " +
                            (dir / "sharded").string() + " >/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  ASSERT_EQ(run_dejavu("sweep-merge " + (dir / "sharded").string() + " -o " + (dir / "sharded.csv").string()).code, 0);
  ASSERT_EQ(run_dejavu("sweep " + sweep + " --no-progress -o " + (dir / "whole").string()).code, 0);
  ASSERT_EQ(run_dejavu("sweep-merge " + (dir / "whole").string() + " -o " + (dir / "whole.csv").string()).code, 0);
  const std::string whole = slurp(dir / "whole.csv");
  EXPECT_EQ(slurp(dir / "sharded.csv"), whole);
  EXPECT_EQ(std::count(whole.begin(), whole.end(), '\n'), 1 + 8);  // a header and 2 x 4 points
}

TEST(Sweep, APointKilledFromOutsideIsTriedAgainOnResume) {
  // A timed-out (or killed) worker failed for no fault of its point: the rerun simulates
  // it rather than keeping the failure, so the resumed table is the uninterrupted one.
  const fs::path dir = scratch() / "retry";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto write = [&](const std::string& engine_and_timeout) {
    std::ofstream(dir / "sweep.yaml") << "name: retry\nplatform: " << src("platforms/presets/dgx-a100-128x8.yaml")
                                      << "\nworkload: " << src("workloads/presets/gpt3-175b.yaml")
                                      << "\nplan: " << src("strategies/presets/tp8-pp16-dp8-1f1b.yaml") << "\n"
                                      << engine_and_timeout << "axes:\n  plan.micro_batch_size: [1, 2]\n";
  };
  write("engine: simgrid\ntimeout: 300 ms\n");  // slow by construction: both time out
  const std::string cmd = "sweep " + (dir / "sweep.yaml").string() + " --no-progress -o " + (dir / "out").string();
  CliRun r = run_dejavu(cmd);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("0 simulated, 2 failed, 0 already done"), std::string::npos) << r.out;
  write("");  // the analytic engine, no timeout: the same points
  r = run_dejavu(cmd);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("2 simulated, 0 failed, 0 already done"), std::string::npos) << r.out;
  r = run_dejavu(cmd);
  EXPECT_NE(r.out.find("0 simulated, 0 failed, 2 already done"), std::string::npos) << r.out;
}

TEST(Sweep, TwoSweepsOnOneFolderSimulateEachPointOnce) {
  const fs::path file = write_sweep("twice", "axes:\n  workload.layers: {from: 2, to: 13, step: 1}\n");
  const fs::path out = file.parent_path() / "out";
  fs::remove_all(out);
  const std::string cmd = std::string(DEJAVU_BINARY) + " sweep " + file.string() + " --no-progress -o " + out.string();
  const fs::path a = file.parent_path() / "a.txt", b = file.parent_path() / "b.txt";
  ASSERT_EQ(std::system((cmd + " >" + a.string() + " & " + cmd + " >" + b.string() + "; wait").c_str()), 0);
  auto simulated = [](const std::string& text) {
    const size_t at = text.find(" simulated");
    const size_t from = text.rfind(' ', at - 1) + 1;
    return std::stoi(text.substr(from, at - from));
  };
  EXPECT_EQ(simulated(slurp(a)) + simulated(slurp(b)), 12) << slurp(a) << slurp(b);
  EXPECT_EQ(point_files(out).size(), 12u);
}

TEST(Sweep, BadSweepsAreOneLineExitTwo) {
  struct Case {
    const char *axes, *expected;
  };
  for (const Case& c :
       {Case{"axes:\n  platform.servers[3].gpu: [H100-SXM-80GB]\n", "no such place in the base platform YAML"},
        Case{"axes:\n  cluster.gpu: [H100-SXM-80GB]\n", "not a field path"},
        Case{"axes:\n  plan.pp: []\n", "at least one value"},
        Case{"axes:\n  plan.pp: {from: 1, to: 4}\n", "either step > 0 or factor > 1"}}) {
    const fs::path file = write_sweep("bad", c.axes);
    const CliRun r = run_dejavu("sweep " + file.string() + " -o " + (file.parent_path() / "out").string());
    EXPECT_EQ(r.code, 2) << c.axes;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("sweep.yaml:"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_THROW(dejavu::tools::parse_shard("5/5"), dejavu::ConfigError);
}

}  // namespace
