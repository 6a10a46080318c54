#include "tools/public_training.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "sim/csv.h"
#include "tests/source_dir.h"
#include "tools/public_row.h"

namespace dejavu::tools {
namespace {

using dejavu::testing::src;

// MT-NLG 530B (Smith et al. 2022, Sec. 2.4): 2240, 2800 and 3360 A100s, tp8 pp35, global
// batch 1920, measured 60.1, 50.2 and 44.4 s per step; every third row (row_id 600) held out.
TEST(PublicTraining, RunsEachRowAsItsSourceRanItAndHoldsOutEveryThirdRow) {
  const PublicSuite s = run_public_training(src("strategies/validation/public/training.csv"), "mtnlg_via_llm_analysis",
                                            src("platforms/presets"), {});
  ASSERT_EQ(s.runs.size(), 3u);
  EXPECT_TRUE(s.skipped.empty());
  EXPECT_DOUBLE_EQ(s.runs[0].measured_s, 60.1);
  EXPECT_FALSE(s.runs[0].held_out);
  EXPECT_TRUE(s.runs[1].held_out);
  EXPECT_NE(s.runs[0].label.find("tp8 pp35 dp8"), std::string::npos);
  // More replicas of the same pipelines: each step shorter, as measured.
  EXPECT_GT(s.runs[0].predicted_s, s.runs[1].predicted_s);
  EXPECT_GT(s.runs[1].predicted_s, s.runs[2].predicted_s);
}

// A guard against regressions of the uncalibrated model on BLOOM's 384-A100 topology sweep
// (BigScience, 65 rows): the held-out rows' geometric-mean error measured 26.9% when the
// suite was added (all optimistic), 22.1% once the rows had their vocabulary and GEMMs their
// shape, 18.8% once they ran on Jean Zay's network (four 100 Gb/s Omni-Path links a server,
// not a DGX A100's eight 200 Gb/s NICs), 18.7% once the 15 rows without heads had 64, 18.5%
// once the bf16 rows kept fp32 gradients and split their pipeline as BLOOM did. The bound is
// this test's, to tighten as the model improves.
TEST(PublicTraining, BloomHeldOutErrorStaysWithinItsBound) {
  PublicOptions held_out;
  held_out.held_out_only = true;
  const PublicSuite s = run_public_training(src("strategies/validation/public/training.csv"),
                                            "bigscience_bloom_prequel", src("platforms/presets"), held_out);
  double log_sum = 0;
  int n = 0;
  for (const PublicRun& r : s.runs) {
    ASSERT_TRUE(r.held_out) << r.label;
    log_sum += std::log(std::fabs(r.predicted_s / r.measured_s - 1));
    ++n;
  }
  ASSERT_EQ(n, 21);
  EXPECT_LT(std::exp(log_sum / n), 0.20);
}

// torchtitan's Llama 3.1 8B on 32 and 64 H200s (Trainy, June 2025: FSDP2, Float8 linears,
// the op-level selective checkpointing of its 8B config): its table gives 47.96 and 46.97 GiB,
// torch's reserved peak, the caching allocator's, which holds neither the CUDA context nor
// NCCL's buffers. dejavu's peak without those two comes within 10% of each; read as Megatron's
// selective recomputation, as it was before, the same rows peaked at 81.6 GB.
TEST(PublicTraining, TorchtitanRowsPeakAtTheirMeasuredMemory) {
  const CsvTable table = public_rows::load_training_table(src("strategies/validation/public/training.csv"));
  PublicOptions fp8;
  fp8.precision = "fp8";
  const std::map<std::string, double> measured_gib = {{"247", 47.96}, {"248", 46.97}};
  int seen = 0;
  for (const CsvRow& r : table.rows()) {
    const auto it = measured_gib.find(r.text("row_id"));
    if (it == measured_gib.end()) continue;
    ++seen;
    const public_rows::ResolvedRow row = public_rows::resolve_row(r, src("platforms/presets"), {}, fp8);
    EXPECT_EQ(row.plan.recompute, "selective-op");
    const strategies::SimulatedDeviceReport& gpu = row.simulation.report.simulated.at(0);
    double runtime = 0;  // the CUDA context and NCCL's buffers
    for (const sim::MemoryPart& part : gpu.memory_at_peak)
      if (part.name.rfind("CUDA context", 0) == 0 || part.name.rfind("NCCL", 0) == 0) runtime += part.bytes;
    EXPECT_GT(runtime, 0);
    EXPECT_NEAR((gpu.peak_memory_bytes - runtime) / (1 << 30), it->second, 0.10 * it->second) << "row " << it->first;
  }
  EXPECT_EQ(seen, 2);
}

// The rows given (training.csv's columns but `server`, then `extra` columns) as suite "s", run
// on the presets.
std::string write_rows(const std::string& name, const std::string& rows, const std::string& extra = "") {
  const std::string csv = ::testing::TempDir() + "/" + name + ".csv";
  std::ofstream(csv)
      << "row_id,source,model,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,gpu,gpus,framework,"
         "precision,tp,pp,vp,cp,dp,sharding,micro_batch,global_batch,recompute,measured_step_s,attention,grad_dtype,"
         "pipeline_split,overlaps,optimizer_dtype,held_out"
      << extra << "\n"
      << rows;
  return csv;
}
PublicSuite run_rows(const std::string& name, const std::string& rows, const std::string& extra = "",
                     const PublicOptions& options = {}) {
  return run_public_training(write_rows(name, rows, extra), "s", src("platforms/presets"), options);
}

// Rows run in forked children (--jobs) come back as they run in the process itself: every
// field to the last bit, in the suite's order, refusals counted alike (row 3 asks tp 3 of 16
// heads).
TEST(PublicTraining, RowsRunInChildrenComeBackAsTheyRunHere) {
  const std::string rows =
      "1,s,GPT,24,2048,16,16,8192,51200,2048,A100-SXM-80GB,8,Megatron-LM,bf16,1,1,,1,8,none,4,64,full,1.0,flash,,,,,0\n"
      "2,s,GPT,24,2048,16,16,8192,51200,2048,A100-SXM-80GB,16,Megatron-LM,bf16,2,2,,1,4,zero1,2,64,selective,1.5,"
      "unfused,fp32,,,,1\n"
      "3,s,GPT,24,2048,16,16,8192,51200,2048,A100-SXM-80GB,24,Megatron-LM,bf16,3,1,,1,8,none,4,64,full,1.0,flash,,,,,"
      "0\n"
      "4,s,Llama,16,2048,32,8,8192,128256,4096,H100-SXM-80GB,8,Composer/llm-foundry,bf16,1,1,,1,8,zero3,2,32,none,"
      "2.0,flash,fp32,,,,0\n"
      "5,s,Llama,16,2048,32,8,8192,128256,4096,B200-SXM-180GB,8,Megatron-Bridge,bf16,1,1,,1,8,zero3,2,32,none,"
      "2.0,flash,,,,,0,4\n";
  PublicOptions children;
  children.jobs = 3;
  const PublicSuite a = run_rows("here", rows, ",offload_layers");
  const PublicSuite b = run_rows("children", rows, ",offload_layers", children);
  ASSERT_EQ(a.runs.size(), 4u);
  EXPECT_EQ(a.runs[3].run.offload, "activation-layers");  // row 5's first 4 layers on the host
  ASSERT_EQ(b.runs.size(), a.runs.size());
  EXPECT_EQ(b.skipped, a.skipped);
  EXPECT_EQ(a.skipped.size(), 1u);
  for (size_t i = 0; i < a.runs.size(); ++i) {
    const PublicRun &x = a.runs[i], &y = b.runs[i];
    EXPECT_EQ(y.label, x.label);
    EXPECT_EQ(y.held_out, x.held_out);
    EXPECT_EQ(y.measured_s, x.measured_s);
    EXPECT_EQ(y.predicted_s, x.predicted_s) << x.label;
    EXPECT_EQ(y.oom, x.oom);
    EXPECT_EQ(y.run.gpu, x.run.gpu);
    EXPECT_EQ(y.run.precision, x.run.precision);
    EXPECT_EQ(y.run.offload, x.run.offload);
    EXPECT_EQ(y.run.params, x.run.params);
    EXPECT_EQ(std::vector<int>({y.run.gpus, y.run.tp, y.run.pp, y.run.dp, y.run.cp, y.run.ep, y.run.zero}),
              std::vector<int>({x.run.gpus, x.run.tp, x.run.pp, x.run.dp, x.run.cp, x.run.ep, x.run.zero}));
    EXPECT_EQ(y.run.steps, x.run.steps);
  }
}

// A row whose vocabulary its source does not state is skipped and counted, never simulated
// as a model without embeddings or LM head (which the BLOOM prequel rows were, until the
// converter gave them their production run's 250,880 tokens).
TEST(PublicTraining, ARowWithoutItsVocabularyIsSkippedAndCounted) {
  const PublicSuite s = run_rows(
      "no_vocab",
      "1,s,GPT,24,2048,16,16,8192,,2048,A100-SXM-80GB,8,Megatron-LM,bf16,1,1,,1,8,none,4,64,full,1.0,flash,,,,,0\n");
  EXPECT_TRUE(s.runs.empty());
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_EQ(s.skipped.begin()->first, "vocabulary not stated");
}

// Nor is a row without its attention heads run (with none, an unfused attention's passes over
// its scores would cost nothing): skipped and counted. The BLOOM prequel's rows whose tables
// leave heads out take their section's NHEADS=64 from the converter.
TEST(PublicTraining, ARowWithoutItsHeadsIsSkippedAndCounted) {
  const PublicSuite s = run_rows("no_heads",
                                 "1,s,GPT,24,2048,,,8192,50257,2048,A100-SXM-80GB,8,Megatron-DeepSpeed,fp16,1,1,,1,8,"
                                 "none,4,64,full,1.0,unfused,,,,,0\n");
  EXPECT_TRUE(s.runs.empty());
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_EQ(s.skipped.begin()->first, "attention heads not stated");
  int prequel_without_heads = 0;
  const CsvTable shipped = CsvTable::load_file(src("strategies/validation/public/training.csv"));
  for (const CsvRow& r : shipped.rows())
    if (r.text("source") == "bigscience_bloom_prequel" && !r.has("heads")) ++prequel_without_heads;
  EXPECT_EQ(prequel_without_heads, 0);
}

// The overlap switches a row's configuration states are the plan's: grad, param and tp as
// Megatron-Core's overlap_grad_reduce, overlap_param_gather and tp_comm_overlap (the last
// only where sequence parallelism gives it collectives to pipeline: not at tp 1).
TEST(PublicTraining, ARowsOverlapsAreItsPlansSwitches) {
  const PublicSuite s = run_rows(
      "overlaps",
      "1,s,GPT,24,2048,16,16,8192,50257,2048,A100-SXM-80GB,8,NeMo,bf16,2,1,,1,4,dp,1,64,none,1.0,flash,,,grad+param+tp,"
      ",0\n"
      "2,s,GPT,24,2048,16,16,8192,50257,2048,A100-SXM-80GB,8,NeMo,bf16,1,1,,1,8,dp,1,64,none,1.0,flash,,,grad+param+tp,"
      ",0\n"
      "3,s,GPT,24,2048,16,16,8192,50257,2048,A100-SXM-80GB,8,NeMo,bf16,2,1,,1,4,dp,1,64,none,1.0,flash,,,grad+fast,,0\n"
      "4,s,GPT,24,2048,16,16,8192,50257,2048,A100-SXM-80GB,8,NeMo,bf16,1,1,,1,8,zero3,1,64,none,1.0,flash,,,grad+param,"
      ",0\n");
  ASSERT_EQ(s.runs.size(), 3u);
  // FSDP (zero3) overlaps by its own prefetch: the bucketed switches are left off.
  EXPECT_EQ(s.runs[2].label.find("overlap"), std::string::npos) << s.runs[2].label;
  EXPECT_NE(s.runs[0].label.find("overlap=grad,param,tp"), std::string::npos) << s.runs[0].label;
  EXPECT_NE(s.runs[1].label.find("overlap=grad,param"), std::string::npos) << s.runs[1].label;
  EXPECT_EQ(s.runs[1].label.find(",tp"), std::string::npos) << s.runs[1].label;
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_NE(s.skipped.begin()->first.find("row 3: overlaps: unknown switch \"fast\""), std::string::npos)
      << s.skipped.begin()->first;
}

// A row's sharding: NeMo's "dp" runs its recipes' distributed optimizer (ZeRO-1), "none" a
// run whose configuration names an unsharded one (NeMo's 2022 fused_adam); anything else is
// refused with the values it could be.
TEST(PublicTraining, ARowsShardingIsItsZeroStage) {
  const PublicSuite s = run_rows(
      "sharding",
      "1,s,GPT,24,2048,16,16,8192,50257,2048,A100-SXM-80GB,8,NeMo,bf16,1,1,,1,8,dp,1,64,none,1.0,flash,,,,,0\n"
      "2,s,GPT,24,2048,16,16,8192,50257,2048,A100-SXM-80GB,8,NeMo,bf16,1,1,,1,8,none,1,64,none,1.0,flash,,,,,0\n"
      "3,s,GPT,24,2048,16,16,8192,50257,2048,A100-SXM-80GB,8,NeMo,bf16,1,1,,1,8,zero7,1,64,none,1.0,flash,,,,,0\n");
  ASSERT_EQ(s.runs.size(), 2u);
  EXPECT_NE(s.runs[0].label.find(" zero1 "), std::string::npos) << s.runs[0].label;
  EXPECT_EQ(s.runs[1].label.find(" zero"), std::string::npos) << s.runs[1].label;
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_NE(s.skipped.begin()->first.find("row 3: sharding: \"zero7\"; valid: dp, none"), std::string::npos)
      << s.skipped.begin()->first;
}

// llm-foundry trains with Composer's FSDP default, BACKWARD_POST: its backward gathers wait
// for the layer before, where torchtitan's (PyTorch's BACKWARD_PRE) run under it. The same
// ZeRO-3 row, one framework each: Composer's step is the longer.
TEST(PublicTraining, ComposerRowsGatherAfterTheLayerBeforeInBackward) {
  const std::string row = ",s,GPT,24,2048,16,16,8192,50257,2048,H100-SXM-80GB,16,";
  const PublicSuite s = run_rows(
      "backward_prefetch", "1" + row + "Composer/llm-foundry,bf16,1,1,,1,16,zero3,1,16,none,1.0,triton,,,,,0\n" + "2" +
                               row + "torchtitan,bf16,1,1,,1,16,zero3,1,16,none,1.0,triton,,,,,0\n");
  ASSERT_EQ(s.runs.size(), 2u);
  EXPECT_NE(s.runs[0].label.find(" zero3 bwd-post "), std::string::npos) << s.runs[0].label;
  EXPECT_NE(s.runs[1].label.find(" zero3 bwd-pre "), std::string::npos) << s.runs[1].label;
  EXPECT_GT(s.runs[0].predicted_s, s.runs[1].predicted_s);
}

// Megatron-Core's defer_embedding_wgrad_compute where a row's configuration sets it, with its
// limit (overlap wgrad22: dgxc-benchmarking's Llama 3.1 70B); a limit that is not a number
// refuses the row, and so does a pipeline of one stage, which has no flush to defer into.
TEST(PublicTraining, ARowsWgradDeferralIsItsPlans) {
  const std::string row = ",s,GPT,24,2048,16,16,8192,50257,2048,H100-SXM-80GB,16,NeMo,bf16,2,";
  const PublicSuite s = run_rows("wgrad", "1" + row + "4,,1,2,dp,1,64,none,1.0,flash,,,grad+param+wgrad22,,0\n" + "2" +
                                              row + "4,,1,2,dp,1,64,none,1.0,flash,,,grad+wgradx,,0\n" + "3" + row +
                                              "1,,1,8,dp,1,64,none,1.0,flash,,,wgrad22,,0\n");
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_NE(s.runs[0].label.find("overlap=grad,param,wgrad22"), std::string::npos) << s.runs[0].label;
  ASSERT_EQ(s.skipped.size(), 2u);
  EXPECT_NE(s.skipped.begin()->first.find("defer_embedding_wgrad_compute"), std::string::npos)
      << s.skipped.begin()->first;
  EXPECT_NE(std::next(s.skipped.begin())->first.find("row 2: overlaps: unknown switch \"wgradx\""), std::string::npos)
      << std::next(s.skipped.begin())->first;
}

// FSDP's SHARD_GRAD_OP (llm-foundry's MPT-1B and 3B on 128 to 512 H100s) runs as ZeRO-3 that
// keeps each layer gathered from its forward to its backward: ZeRO-2's memory, FSDP's
// per-layer collectives. Against Composer's ZeRO-3, whose backward gathers wait for the layer
// before, the same row gathers only in the forward, and its step is the shorter.
TEST(PublicTraining, AShardGradOpRowKeepsItsLayersGathered) {
  const std::string row = ",s,GPT,24,2048,16,16,8192,50257,2048,H100-SXM-80GB,16,Composer/llm-foundry,bf16,1,1,,1,16,";
  const PublicSuite s = run_rows("shard_grad_op", "1" + row + "shard_grad_op,4,64,none,1.0,triton,,,,,0\n" + "2" + row +
                                                      "zero3,4,64,none,1.0,triton,,,,,0\n");
  ASSERT_EQ(s.runs.size(), 2u);
  EXPECT_NE(s.runs[0].label.find(" zero3 bwd-post kept "), std::string::npos) << s.runs[0].label;
  EXPECT_EQ(s.runs[1].label.find(" kept"), std::string::npos) << s.runs[1].label;
  EXPECT_LT(s.runs[0].predicted_s, s.runs[1].predicted_s);
}

// torchtitan's tensor parallelism shards the norms and the residual stream along the sequence
// (its SequenceParallel plan), as Megatron's sequence parallelism does; llm-foundry's rows
// state none.
TEST(PublicTraining, TorchtitanTensorParallelRowsRunSequenceParallel) {
  const std::string row = ",s,GPT,24,2048,16,16,8192,50257,2048,H100-SXM-80GB,16,";
  const std::string tail = ",bf16,2,1,,1,8,zero3,1,16,selective,1.0,flash,,,,,0\n";
  const CsvTable table = public_rows::load_training_table(
      write_rows("sequence_parallel", "1" + row + "torchtitan" + tail + "2" + row + "Composer/llm-foundry" + tail));
  ASSERT_EQ(table.rows().size(), 2u);
  EXPECT_TRUE(public_rows::resolve_row(table.rows()[0], src("platforms/presets"), {}, {}).plan.sequence_parallel);
  EXPECT_FALSE(public_rows::resolve_row(table.rows()[1], src("platforms/presets"), {}, {}).plan.sequence_parallel);
}

// MaxText's Llama 2 and 3 70B runs (dgxc-benchmarking's configure.sh at 35a9aecc and 85380ffe)
// shard over every GPU up to 256 and over 128 beside data parallelism from 512 (ici_fsdp 8 x
// dcn_fsdp 16): the shipped rows run as hybrid sharding there, with the remat policy each
// configure.sh sets (Llama 2: save_dot_except_mlpwi or _mlp; Llama 3: save_qkv_proj).
TEST(PublicTraining, MaxTextRowsShardOverGroupsOf128FromFiveHundredTwelveGpus) {
  const CsvTable table = public_rows::load_training_table(src("strategies/validation/public/training.csv"));
  int rows = 0;
  for (const CsvRow& r : table.rows()) {
    if (r.text("source") != "dgxc_maxtext") continue;
    ++rows;
    const strategies::Plan plan = public_rows::resolve_row(r, src("platforms/presets"), {}, {}).plan;
    const int gpus = std::stoi(r.text("gpus"));
    SCOPED_TRACE(r.text("row_id"));
    EXPECT_EQ(plan.dp, gpus);
    EXPECT_EQ(plan.zero, 3);
    EXPECT_EQ(plan.shard_replicas(), gpus >= 512 ? 128 : gpus);
    EXPECT_EQ(plan.recompute, r.text("model") == "Llama 2 70B" ? "save-dot-except-mlpwi" : "save-qkv-proj");
  }
  EXPECT_EQ(rows, 22);  // Llama 2: 6 bf16, 6 fp8; Llama 3: 5 and 5
}

// A cell outside its column's values refuses its row, naming the row, the column and the values.
TEST(PublicTraining, ACellOutsideItsValuesRefusesTheRow) {
  const std::vector<std::string> tails = {
      "fp64,1,1,,1,8,dp,1,64,none,1.0,flash,,,,,0", "bf16,1,1,,1,8,dp,1,64,most,1.0,flash,,,,,0",
      "bf16,1,1,,1,8,dp,1,64,none,1.0,flash,fp64,,,,0", "bf16,1,1,,1,8,dp,1,64,none,1.0,flash,,loss,,,0",
      "bf16,1,1,,1,8,dp,1,64,none,1.0,flash,,,,fp16,0"};
  std::string rows;
  for (size_t i = 0; i < tails.size(); ++i)
    rows += std::to_string(i + 1) + ",s,GPT,24,2048,16,16,8192,50257,2048,A100-SXM-80GB,8,NeMo," + tails[i] + "\n";
  const PublicSuite s = run_rows("cells", rows);
  EXPECT_TRUE(s.runs.empty());
  std::string reasons;
  for (const auto& [why, n] : s.skipped) reasons += why + "\n";
  for (const char* expected :
       {"row 1: precision: \"fp64\"; valid: bf16, fp16, fp8, fp4",
        "row 2: recompute: \"most\"; valid: none, full, selective, selective-op, save-dot-except-mlpw",  // cut at 90
        "row 3: grad_dtype: \"fp64\"; valid: empty, fp32, bf16, fp16",
        "row 4: pipeline_split: \"loss\"; valid: empty, embedding+loss",
        "row 5: optimizer_dtype: \"fp16\"; valid: empty, fp32, bf16"})
    EXPECT_NE(reasons.find(expected), std::string::npos) << expected << " in\n" << reasons;
}

// The optional sequence_parallel column: "off" runs a NeMo row with tp > 1 as its 2022 configs
// did (no sequence parallelism), the same plan as a Megatron-LM row; empty keeps NeMo's; other
// values are refused.
TEST(PublicTraining, ASequenceParallelOffRowRunsWithoutIt) {
  const std::string row = ",s,GPT,24,2048,16,16,8192,50257,2048,A100-SXM-80GB,8,";
  const std::string rest = ",bf16,2,1,,1,4,none,1,64,none,1.0,flash,,,,,0,";
  const PublicSuite s = run_rows("sp",
                                 "1" + row + "NeMo" + rest + "off\n" + "2" + row + "Megatron-LM" + rest + "\n" + "3" +
                                     row + "NeMo" + rest + "\n" + "4" + row + "NeMo" + rest + "on\n",
                                 ",sequence_parallel");
  ASSERT_EQ(s.runs.size(), 3u);
  EXPECT_EQ(s.runs[0].predicted_s, s.runs[1].predicted_s);
  EXPECT_NE(s.runs[0].predicted_s, s.runs[2].predicted_s);
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_NE(s.skipped.begin()->first.find("row 4: sequence_parallel: \"on\"; valid: off"), std::string::npos)
      << s.skipped.begin()->first;
}

// A row's `server` names the preset it runs on where its source did not run on its GPU's DGX:
// BLOOM's Jean Zay has four 100 Gb/s Omni-Path links a server where a DGX A100 has a 200 Gb/s
// NIC per GPU. Inside one server the two are the same (no NIC in use); across two, the data-
// parallel all-reduce of Jean Zay's replicas crosses a quarter of the bandwidth and takes longer.
TEST(PublicTraining, ARowRunsOnTheServersItsSourceNames) {
  const std::string csv = ::testing::TempDir() + "/server.csv";
  std::ofstream(csv)
      << "row_id,source,model,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,gpu,gpus,framework,"
         "precision,tp,pp,vp,cp,dp,sharding,micro_batch,global_batch,recompute,measured_step_s,attention,grad_dtype,"
         "pipeline_split,overlaps,optimizer_dtype,server,held_out\n"
         "1,s,GPT,24,2048,16,16,8192,50257,2048,A100-SXM-80GB,8,Megatron-DeepSpeed,bf16,1,1,,1,8,dp,4,32,none,1.0,"
         "unfused,,,,,,0\n"
         "2,s,GPT,24,2048,16,16,8192,50257,2048,A100-SXM-80GB,8,Megatron-DeepSpeed,bf16,1,1,,1,8,dp,4,32,none,1.0,"
         "unfused,,,,,jean-zay-a100-48x8,0\n"
         "3,s,GPT,24,2048,16,16,8192,50257,2048,A100-SXM-80GB,16,Megatron-DeepSpeed,bf16,1,1,,1,16,dp,4,64,none,1.0,"
         "unfused,,,,,,0\n"
         "4,s,GPT,24,2048,16,16,8192,50257,2048,A100-SXM-80GB,16,Megatron-DeepSpeed,bf16,1,1,,1,16,dp,4,64,none,1.0,"
         "unfused,,,,,jean-zay-a100-48x8,0\n";
  const PublicSuite s = run_public_training(csv, "s", src("platforms/presets"), {});
  ASSERT_EQ(s.runs.size(), 4u);
  EXPECT_DOUBLE_EQ(s.runs[1].predicted_s, s.runs[0].predicted_s);
  EXPECT_GT(s.runs[3].predicted_s, s.runs[2].predicted_s);
}

}  // namespace
}  // namespace dejavu::tools
