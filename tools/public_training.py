#!/usr/bin/env python3
"""Writes strategies/validation/public/training.csv: the public training-throughput rows of
../shared/validation/public/training_throughput.csv in the plain form dejavu's CSV reader takes
(no quoted cells), with free-text fields mapped to the few values dejavu understands:

  gpu        a dejavu catalog name, or `unsupported` (H100 96GB HBM2e)
  precision  bf16 | fp16 | fp8 (any 8-bit format: FP8, MXFP8, current scaling) | fp4 (NVFP4)
  sharding   dp | zero1 | zero2 | zero3 | shard_grad_op (FSDP's) | offload (ZeRO-3 with
             optimizer offload) | unknown;
             none in hand-entered rows whose run's config names an unsharded optimizer
             (NeMo's 2022 fused_adam: public/nemo_megatron_launcher_a100_2207.csv), where a
             NeMo row's dp means its recipes' distributed optimizer
  recompute  none | full | selective | selective-op (torchtitan's op-level policy) | unknown
             ("not stated")
  measured_step_s  the reported step time, else global batch tokens / tokens per second
  attention  flash | cudnn | triton | unfused: the attention kernel the source's framework ran
  grad_dtype fp32 where the source or its recipe says gradients were reduced in fp32, else empty (the
             model's 16-bit dtype)
  pipeline_split  embedding+loss where the run's recipe splits layers over pipeline stages
             counting the embedding and the loss as layers (Megatron-Core's
             account_for_{embedding,loss}_in_pipeline_split), else empty (even)
  overlaps   Megatron-Core's overlap switches the run's configuration turns on, joined by +:
             grad (overlap_grad_reduce), param (overlap_param_gather), tp (tp_comm_overlap);
             empty where the source does not say
  optimizer_dtype  bf16 where the run's configuration keeps Adam's state in bf16, else empty
             (fp32)
  server     a platforms/presets name where the source's network is not its GPU's vendor
             server's (Jean Zay's Omni-Path), else empty: the DGX of the GPU type
  held_out   1 for every third row (row_id % 3 == 0), fixed here before anything is fitted
  fp8_param_gather  on where the run's configuration keeps fp8 primary weights (Megatron-Core's
             fp8_param_gather, NeMo's fp8_params) or all-gathers its weights in fp8 (torchao's
             FSDP2 float8 all-gather), else empty
  fp8_recipe delayed | tensorwise | mxfp8: the fp8 scaling recipe the run's configuration names
             (Megatron-Core's --fp8-recipe names), empty elsewhere

Hand-entered tables in the same form (public/nemo_megatron_launcher_a100_2207.csv) may add a
last column, sequence_parallel: off where the run's config turns it off with tp > 1 (a NeMo row
runs it otherwise), else empty.

Run: python3 tools/public_training.py ../shared/validation/public/training_throughput.csv \
       > strategies/validation/public/training.csv
"""
import csv
import sys


# A100 80GB where the field names 80GB, even beside 40GB: MT-NLG's row cites llm-analysis's 40GB
# and NVIDIA's and Microsoft's 80GB; the operators' own blog (and the MT-NLG paper, arXiv
# 2201.11990 section 3.1: "8 NVIDIA 80-GB A100 GPUs") is the one to take, and on 40GB its layout
# would not fit in memory.
def gpu(t):
    t = t.lower()
    if "a100" in t:
        return "A100-SXM-40GB" if "40gb" in t and "80gb" not in t else "A100-SXM-80GB"
    if "h100" in t and "96gb" not in t:
        return "H100-SXM-80GB"
    if "h200" in t:
        return "H200-SXM-141GB"
    if "gb300" in t:
        return "GB300-288GB"
    if "gb200" in t:
        return "GB200-186GB"
    if "b200" in t:  # GB200 matched above
        return "B200-SXM-180GB"
    return "unsupported"


def precision(t):
    t = t.lower()
    if "fp4" in t:
        return "fp4"
    if "fp8" in t or "float8" in t:
        return "fp8"
    if "fp16" in t and "bf16" not in t:
        return "fp16"
    return "bf16"


def sharding(t):
    t = t.lower()
    if "offload" in t:
        return "offload"
    if "zero-3" in t or "full_shard" in t or "fsdp2" in t or "fully sharded" in t or "megatron fsdp" in t:
        return "zero3"
    if "shard_grad_op" in t:
        return "shard_grad_op"  # FSDP's: ZeRO-2's state, gathered layer by layer in the forward
    if "zero-2" in t:
        return "zero2"
    if "zero-1" in t or "distributed optimizer" in t and "not stated" not in t:
        return "zero1"
    if "fsdp" in t:
        return "unknown"  # FSDP with a degree the source does not state
    if t.startswith("dp"):
        return "dp"
    return "unknown"


# torchtitan's "selective" is its op-level policy: the Llama configs of every commit its rows
# ran set selective_ac_option = "op" (train_configs/llama3_8b.toml at 9dec370, Dec 2024;
# torchtitan/models/llama3/train_configs/llama3_8b.toml at 820504e and e7c0cae, June 2025),
# dejavu's selective-op (strategies/recompute_modes.h); Megatron's selective is the others'.
def recompute(t, source=""):
    t = t.lower()
    if t in ("save-dot-except-mlpwi", "save-qkv-proj"):
        return t
    for k in ("none", "full", "selective"):
        if t.startswith(k):
            return "selective-op" if k == "selective" and source == "torchtitan_benchmarks" else k
    return "unknown"


# A row whose vocabulary its source leaves unstated takes the vocabulary of the production run
# the same source folder documents, when there is one: the BLOOM prequel's topology sweep
# (chronicles-prequel.md) ran tr11-176B-ml, whose README gives the 250,880-token tokenizer
# (row 519, source bigscience_bloom). Otherwise the field stays empty and dejavu skips the row.
VOCAB_OF_SOURCE = {"bigscience_bloom_prequel": "250880"}

# The BLOOM prequel's rows whose table has no NHEADS column all sit in chronicles-prequel.md's
# "GBS Variations" section, whose header sets NHEADS=64 (the "Final round comparison" before it:
# "all NHEADS=64"); bigscience-workshop/bigscience at 9e64edec2ad1. Any other row without heads
# stays empty and dejavu skips it.
HEADS_OF_SOURCE = {"bigscience_bloom_prequel": "64"}

# A row whose virtual pipeline its source table leaves out ("NA") while a later revision of the
# same source gives it for the same configuration: dgxc-benchmarking's nemotron/README.md lists
# VP "NA" for Nemotron-4 340B on H100 (TP8 PP8 MBS1, 256-2048 GPUs) at 85380ff, and VP 12 for
# that same configuration at dc1028f6747827b7bf4552de5a5000671aea6a24 and
# 1f6d9f40e4117d7c71b726f86074ac01c29f87f5 (step 4.61 s against 4.36 s at 256 GPUs).
VP_OF_MODEL = {("dgxc_benchmarking", "Nemotron-4 340B"): "12"}

# Recomputation a row's source leaves to its recipe ("not stated (see recipe)"), where the recipe
# says. Megatron-Bridge's llama31_405b_pretrain_config recomputes nothing: it sets
# recompute_granularity = None (src/megatron/bridge/recipes/llama/llama3.py, from b19588a05,
# February 2026, through c76eae64e, April 2026), and sets no recomputation before that
# (7e8111c23, November 2025: Megatron-Core's default, none); of the 405B workload presets only
# GB200 NVFP4 V1 (128 GPUs, pp16 vp8) sets recompute_num_layers (1; scripts/performance/configs/
# llama/llama31_workload_base_configs.py@c76eae64e; llama31/workload_base_configs.py@da5a1bee8
# sets none). Its Llama 3 8B and 70B pretrain configs set recompute_granularity = None too
# (llama3.py@c76eae64e; none set at 7e8111c23), and their presets (scripts/performance/configs/
# llama3/workload_base_configs.py@7e8111c23, llama/llama3_workload_base_configs.py@c76eae64e) set
# recompute_num_layers only for 8B on H100 FP8-CS (5 layers, which scripts/performance/utils/
# overrides.py turns into recompute_granularity "full" with recompute_method "block", the plan's
# recompute: full with recompute_layers: 5). That row stays unstated all the same: the page ran it
# under Megatron FSDP (its FSDP column 1 at 25.11, docs/performance-summary.md at v0.2.0), which
# the preset does not set (configs/llama3/workload_base_configs.py at v0.2.0: no
# use_megatron_fsdp for 8B on H100), so the run was not the preset, and the recomputation the
# preset needs without FSDP says nothing of it (dejavu takes the first mode that fits: none). The 70B FP8-CS presets on GB300, GB200 and B200 (Megatron FSDP)
# offload the activations of 20, 40 and 5 layers to the host instead (cpu_offloading_num_layers;
# GB300 V1 at c76eae64e, and 7e8111c23): no recomputation. Column offload_layers carries that
# count (BRIDGE_OFFLOAD_LAYERS below): the plan's offload: {activations: cpu, layers: N}.
#
# dgxc-benchmarking's README tables leave recomputation out, while the NeMo configs beside them
# at the same commits (35a9aecc8d5b, 1b9bb6b3cfea) state it: activations_checkpoint_granularity
# null in nemo_megatron/gpt3_175b_hydra.yaml, llama3.1/llama3.1_{8b,70b,405b}.yaml and
# nemotron/nemotron4-15b-synth.yaml, selective in nemotron/nemotron4-340b-synth.yaml; each
# launch.sh switches fp8 on or off and nothing else of it. At 85380ffe02 the Llama and Nemotron
# rows ran NeMo 2's recipes at the NeMo commit its setup.sh pins (NEMO_COMMIT d2b21556f245):
# nemo/collections/llm/recipes/llama3_70b.py, llama31_405b.py, llama3_8b.py, nemotron4_15b.py and
# nemotron4_340b.py set no recompute_granularity, Megatron-Core's default None: no recomputation.
DGXC_CONFIG_COMMITS = ("35a9aecc8d5b17d99d80f52f38c75ade0dbab7ae", "1b9bb6b3cfea881fc4997ac111e695e52ae901aa")
DGXC_NEMO2_COMMIT = "85380ffe02eac74e1d07e556b28cdcf7cce2d2f0"
DGXC_RECOMPUTE_OF_README = {
    "nemo_megatron/README_175b.md": "none", "llama3.1/README_8b.md": "none", "llama3.1/README_70b.md": "none",
    "llama3.1/README_405b.md": "none", "nemotron/README_15b.md": "none", "nemotron/README_340b.md": "selective"}


def bridge_405b(r):
    return r["source_id"] == "megatron_bridge_perf_summary" and r["model"] == "LLAMA3.1_405B"


def bridge_llama3(r):
    return r["source_id"] == "megatron_bridge_perf_summary" and r["model"] in ("LLAMA3_8B", "LLAMA3_70B")


# NeMo's July 2024 performance summary leaves recomputation out; the NeMo-Framework-Launcher
# training configs of its release (tag 24.07, 8325688d8345, launcher_scripts/conf/training/)
# state it: activations_checkpoint_granularity null in gpt3/5b.yaml, 20b.yaml, 175b_fp8.yaml
# and mlperf.yaml, llama/llama2_7b.yaml, llama2_13b.yaml, llama2_70b.yaml (method block with 0
# layers), llama3_8b.yaml and llama3_70b.yaml, nemotron/nemotron_8b.yaml and nemotron_22b.yaml;
# selective in nemotron/nemotron_340b.yaml.
NEMO_2407_RECOMPUTE = {"Nemotron-340B": "selective"}


def dgxc_at(r, commits):
    return r["source_id"] == "dgxc_benchmarking" and any("@" + c in r["source"] for c in commits)


def dgxc_nemo2(r):
    return r["framework"].startswith("NeMo") and dgxc_at(r, (DGXC_NEMO2_COMMIT,))


# cpu_offloading_num_layers of Megatron-Bridge's Llama 3 70B FP8-CS presets with Megatron FSDP,
# by GPU (scripts/performance/configs/llama3/workload_base_configs.py at v0.2.0,
# configs/llama/llama3_workload_base_configs.py at v0.3.0 to v0.5.0 and c76eae64e, V1 and V2
# alike; the page's FSDP rows are these presets).
BRIDGE_OFFLOAD_LAYERS = {"GB300": "20", "GB200": "40", "B200": "5"}


def offload_layers(r):
    if not bridge_llama3(r) or r["model"] != "LLAMA3_70B" or sharding(r["sharding"]) != "zero3":
        return ""
    if not r["precision"].upper().startswith("FP8") or "MX" in r["precision"].upper():
        return ""
    return BRIDGE_OFFLOAD_LAYERS.get(gpu(r["gpu_type"]).split("-")[0], "")


def bridge_h100_8b(r):
    return bridge_llama3(r) and r["model"] == "LLAMA3_8B" and gpu(r["gpu_type"]).startswith("H100")


def recipe_recompute(r):
    if bridge_405b(r):
        nvfp4_v1 = "fp4" in r["precision"].lower() and r["num_gpus"] == "128"
        return "" if nvfp4_v1 else "none"
    if bridge_llama3(r):
        return "" if bridge_h100_8b(r) else "none"
    if dgxc_at(r, DGXC_CONFIG_COMMITS):
        readme = r["source"].split(":", 1)[1].split("@", 1)[0]
        return DGXC_RECOMPUTE_OF_README.get(readme, "")
    if dgxc_nemo2(r):
        return "none"
    if r["source_id"] == "nemo_perf_summary_2407":
        return NEMO_2407_RECOMPUTE.get(r["model"], "none")
    return ""


# The attention kernel each framework ran. Megatron-DeepSpeed and DeepSpeed (BLOOM, MT-NLG,
# 2021-22) ran it unfused. MosaicML's llm-foundry benchmark tables (A100 April 2023, H100
# October 2023 and January 2024) were made by scripts/train/benchmarking/submit_benchmarks.py,
# whose `--attn_impl` defaults to `triton` at each of those commits (9fa3ceb9a, b2a43a147,
# 5e85bd62d), with no other value in the README's commands: llm-foundry's flash_attn_triton, the
# HazyResearch Triton kernel. NeMo and Megatron-Bridge run attention through Transformer
# Engine's DotProductAttention, which picks cuDNN's fused kernel (FusedAttention) over
# FlashAttention on Hopper and later "for performance" (NVIDIA/TransformerEngine 32db39288,
# v1.2, December 2023: on sm90; transformer_engine/pytorch/attention/dot_product_attention/
# utils.py at d0067d0da: compute capability 9.0 and up): their rows on H100, H200 and Blackwell
# ran cuDNN's kernel. The rest ran FlashAttention-class CUDA kernels (torchtitan's SDPA, the
# HF rows' named kernels).
ATTENTION_OF_FRAMEWORK = {"Megatron-DeepSpeed": "unfused", "DeepSpeed": "unfused", "Composer/llm-foundry": "triton"}
TRANSFORMER_ENGINE_FRAMEWORKS = ("NeMo", "Megatron-Bridge")


def attention(r, framework):
    if maxtext(r):
        return "cudnn"
    if framework in TRANSFORMER_ENGINE_FRAMEWORKS and not gpu(r["gpu_type"]).startswith(("A100", "unsupported")):
        return "cudnn"
    return ATTENTION_OF_FRAMEWORK.get(framework, "flash")


# The loss each framework ran. Megatron-Bridge's performance scripts set
# cross_entropy_fusion_impl "te" (scripts/performance/utils/helpers.py at v0.2.0, 25.11's
# container, and utils/overrides.py from v0.3.0 on) beside GPTModelProvider's
# cross_entropy_loss_fusion True: Transformer Engine's fused Triton kernel. llm-foundry's models
# default to loss_fn fused_crossentropy, FlashAttention's xentropy kernel (mosaic_gpt.py at
# 9fa3ceb9a, modeling_mpt.py at b2a43a147 and 5e85bd62d), which no benchmark YAML overrides (only
# mpt-small-cpu.yaml names torch_crossentropy). The rest ran Megatron's unfused fp32 loss (NeMo 2's
# native fusion makes the same passes over the logits).
CROSS_ENTROPY_OF_FRAMEWORK = {"Megatron-Bridge": "te", "Composer/llm-foundry": "flash"}


# The dtype gradients were reduced in, where the row says. llm-foundry's rows name Composer's
# FSDP mixed-precision mode: DEFAULT reduces in fp32 (composer/distributed/mosaic_fsdp.py,
# get_mixed_precision: param_dtype the autocast dtype, reduce_dtype torch.float32), PURE in
# the autocast dtype. NeMo's performance scripts (scripts/performance/helpers.py,
# set_precision_configs) and Megatron-Bridge's performance configs set
# grad_reduce_in_fp32 = False: bf16, the model's dtype, as the other rows are left. So do the
# NeMo 2 runs of dgxc-benchmarking at 85380ffe02: their recipes' bf16_mixed() sets
# grad_reduce_in_fp32=True, but they run pretrain_recipe(performance_mode=True), whose
# pretrain_performance_optimizations ends with plugins.grad_reduce_in_fp32 = False, which
# MegatronStrategy copies into the DDP config (update_config_with_dtype_overrides), for Llama
# 3.1 8B, 70B and 405B and Nemotron-4 15B and 340B alike (NeMo d2b21556f245,
# nemo/collections/llm/recipes/*.py and nemo/lightning/pytorch/strategies/megatron_strategy.py).
#
# BigScience's bf16 runs (BLOOM-176B's production run and its prequel's bf16 rows, "BF16Optimizer,
# fp32 grad accumulation") ran DeepSpeed's BF16_Optimizer: ZeRO stage 0 with bf16 ("bf16 must use
# z0! it implements its own zero stage 1 equivalent", train/tr11-176B-ml/tr11-176B-ml.slurm at
# 003b2505 in bigscience-workshop/bigscience), which keeps a whole fp32 gradient buffer beside the
# bf16 weights and reduces it in fp32 (fp32_groups_gradients_flat, get_grads_for_reduction:
# deepspeed/runtime/bf16_optimizer.py at 06e39a56, 2022).
#
# torchtitan's FSDP2 reduces gradients in fp32: training.mixed_precision_reduce defaults to
# "float32" at 9dec370 (torchtitan/config_manager.py) and is Literal["float32"], its only
# value, at 820504e and e7c0cae.
def grad_dtype(r):
    bf16_optimizer = r["source_id"].startswith("bigscience_bloom") and precision(r["precision"]) == "bf16"
    torchtitan_fsdp = r["source_id"] == "torchtitan_benchmarks" and "FSDP" in r["sharding"]
    return "fp32" if "MP mode DEFAULT" in r["precision"] or bf16_optimizer or torchtitan_fsdp or maxtext(r) else ""


# Megatron-Bridge's llama31_405b_pretrain_config sets account_for_embedding_in_pipeline_split and
# account_for_loss_in_pipeline_split (src/megatron/bridge/recipes/llama/llama3.py at 7e8111c23,
# November 2025, and at c76eae64e, April 2026): its 126 layers and those two split evenly.
# NeMo 2's llama31_405b recipe, which dgxc-benchmarking's 85380ffe02 runs, sets both as well
# (its trainer()'s defaults, nemo/collections/llm/recipes/llama31_405b.py at d2b21556f245): 128
# over pp 8 x vp 8, and the proxies' 30 and 62 layers over pp 4 x vp 8, split evenly.
# Megatron-DeepSpeed's --pp-partition-method 'type:transformer|embedding' (BLOOM-176B's run and its
# prequel's bf16 rows) weighs each transformer layer and each of the two tied embedding layers
# (the input embedding and the output head, DeepSpeed's TiedLayerSpec) as one when it splits the
# pipeline: 70 layers and those two make 6 a stage over pp 12, the first and last stages holding
# 5 layers beside them, as the two Megatron-Core switches split.
def pipeline_split(r):
    nemo2_405b = dgxc_nemo2(r) and r["model"].startswith("Llama 3.1 405B")
    deepspeed_typed = "type:transformer|embedding" in r["other_opts"]
    return "embedding+loss" if bridge_405b(r) or nemo2_405b or deepspeed_typed else ""


# The overlaps of dgxc-benchmarking's NeMo runs. At 35a9aecc8d5b and 1b9bb6b3cfea their NeMo
# YAMLs (the files named above) set overlap_grad_sync and overlap_param_sync true for every
# model and ub_tp_comm_overlap true for GPT-3 175B, Llama 3.1 70B and 405B and Nemotron-4 15B,
# false for Llama 3.1 8B and Nemotron-4 340B; but nemotron/configure.sh passes
# model.ub_tp_comm_overlap=True on the command line of every Nemotron-4 run (line 97 at
# 35a9aecc8d5b, 108 at 1b9bb6b3cfea), so 340B ran with it too. At 85380ffe02 the runs are NeMo 2's performance
# scripts (llama3.1/pretrain_llama31.py, nemotron/gsw_nemo.patch): the recipes' trainer runs
# DistributedDataParallelConfig(overlap_grad_reduce=True, overlap_param_gather=True)
# (NVIDIA/NeMo nemo/collections/llm/recipes/llama31_8b.py at 0a8b017a1, and the other models'
# recipes alike), and the scripts set a userbuffers tp_comm_overlap_cfg for Llama 3.1 70B and
# 405B and Nemotron-4 15B and 340B, none for 8B.
def dgxc_overlaps(r):
    return "grad+param" if r["model"].startswith("Llama 3.1 8B") else "grad+param+tp"


# The overlaps of Megatron-Bridge's performance runs: its Llama recipes set
# ddp.overlap_grad_reduce and overlap_param_gather true (src/megatron/bridge/recipes/llama/
# llama3.py at 7e8111c23 and c76eae64e), the performance configs (scripts/performance/configs/
# llama3/llama3_llm_pretrain.py@7e8111c23, llama/llama3_llm_pretrain.py and
# llama31_llm_pretrain.py@c76eae64e) keep the recipes' tp_comm_overlap (true for 70B and 405B;
# 8B: tensor_model_parallel_size > 1), switch it off for nvfp4, and switch overlap_param_gather
# off for fp8_mx ("keeping this enabled causes NaN grad norm"). Megatron FSDP rows (zero3)
# overlap by their own prefetch: the converter leaves grad and param out there.
# NeMo-Framework-Launcher's README (3579cdb3f2af, September 2022, section 7.1.2) times GPT-3 5B
# and 175B on DGX A100 80GB without the runs' parallel layout; the training configs of the same
# commit (conf/training/gpt3/5b.yaml and 175b.yaml) give it, and the converter takes them as the
# runs' (the source does not confirm it): 5B tp1 pp1, 175B tp8 pp8 with sequence parallelism,
# micro batch 2 and global batch 2048 for both; 5B activations_checkpoint_method block with
# activations_checkpoint_num_layers 0 (no layer recomputed), 175B selective; bf16 with
# distributed_fused_adam (the optimizer states sharded: zero1). NeMo's attention in 2022 is
# Megatron's, unfused (fused scale-mask-softmax, scores stored).
LAUNCHER_COMMIT = "3579cdb3f2afdeaf23af3e0da6497555566c3f0c"
LAUNCHER_CONFIG = {  # model: tp, pp, micro batch, global batch, recompute
    "GPT-3 5B": ("1", "1", "2", "2048", "none"), "GPT-3 175B": ("8", "8", "2", "2048", "selective")}


# Megatron-Bridge's 26.02.01 summary (performance-summary-archive.md, added in cfeddcd94) lists
# its GB300 Llama 3 70B NVFP4 and MXFP8 rows with MBS 2 and VP n/a (NVFP4 with PP 1 as well):
# the cells of the FP8 Megatron-FSDP row beside them. The presets of that container's release
# (v0.3.1, as at v0.3.0 and at cfeddcd94 itself: scripts/performance/configs/llama/
# llama3_workload_base_configs.py, LLAMA3_70B_PRETRAIN_CONFIG_GB300_{NVFP4,FP8_MX}_V2) run both
# at pp 4, vp 5 and WorkloadBaseConfig's micro batch 1, as the 26.02 and 26.04 tables list them,
# and the two rows' throughput (7002 and 4798 tokens/s/GPU) sits among those tables' rows of
# that layout (6798-7397 and 4596-4864). The converter takes the presets' layout.
BRIDGE_PRESET_LAYOUT = {  # (software_version, gpu, model, precision): tp, pp, vp, micro batch
    ("NeMo container 26.02.01", "GB300-288GB", "LLAMA3_70B", "NVFP4"): ("1", "4", "5", "1"),
    ("NeMo container 26.02.01", "GB300-288GB", "LLAMA3_70B", "MXFP8"): ("1", "4", "5", "1")}


def bridge_preset_layout(r):
    if r["source_id"] != "megatron_bridge_perf_summary":
        return None
    return BRIDGE_PRESET_LAYOUT.get((r["software_version"], gpu(r["gpu_type"]), r["model"], r["precision"]))


def launcher_config(r):
    if r["source_id"] != "nemo_megatron_launcher_a100" or "@" + LAUNCHER_COMMIT not in r["source"]:
        return None
    return LAUNCHER_CONFIG.get(r["model"])


# Adam's state in bf16 where the run's configuration says: NeMo's Nemotron-4 340B configs set
# distributed_fused_adam's `dtype: bf16` (master weights, momentum and variance): dgxc-benchmarking's
# nemotron/nemotron4-340b-synth.yaml at the NeMo 1 commits above, and NeMo-Framework-Launcher's
# launcher_scripts/conf/training/nemotron/nemotron_340b.yaml at tag 24.07, the container of NeMo's
# July 2024 performance summary. No other config of these sources sets it.
def optimizer_dtype(r):
    if not r["model"].replace("-", " ").lower().startswith("nemotron 4 340b") and r["model"] != "Nemotron-340B":
        return ""
    if r["source_id"] == "nemo_perf_summary_2407":
        return "bf16"
    if dgxc_at(r, DGXC_CONFIG_COMMITS):
        return "bf16"
    return ""


# The servers and network of a source that did not run on its GPU's DGX: Jean Zay (BLOOM) has
# four 100 Gb/s Omni-Path links a server where a DGX A100 has a 200 Gb/s NIC per GPU.
def server(r):
    return "jean-zay-a100-48x8" if "Jean Zay" in r["inter_node_network"] else ""


def bridge_overlaps(r):
    precision = r["precision"].upper()
    on = ["grad"] if "MX" in precision else ["grad", "param"]
    if int(r["tp"] or 1) > 1 and "NVFP4" not in precision:
        on.append("tp")
    return "+".join(on)


# The overlaps of NeMo's July 2024 performance summary (NeMo 24.07): every training config of
# NeMo-Framework-Launcher at tag 24.07 (8325688d8345, launcher_scripts/conf/training/) sets
# optim.overlap_grad_sync and overlap_param_sync true; ub_tp_comm_overlap is true in gpt3/20b.yaml,
# llama/llama2_70b.yaml, llama/llama3_70b.yaml, nemotron/nemotron_8b.yaml and nemotron_22b.yaml
# and in gpt3/mlperf.yaml, NeMo's MLPerf GPT-3 config, taken for the 512-GPU GPT-3 175B row (the
# summary links that row's figure to NVIDIA's MLPerf Training results); false in gpt3/175b.yaml
# and 175b_fp8.yaml (the 128-GPU row) and nemotron/nemotron_340b.yaml. The 5B, 7B, 13B and
# Llama 3 8B rows run tp 1.
NEMO_2407_TP_OVERLAP = {"GPT3-20B", "LLAMA2-70B", "LLAMA3-70B", "Nemotron-8B", "Nemotron-22B"}


def nemo_2407_mlperf(r):
    return r["source_id"] == "nemo_perf_summary_2407" and r["model"] == "GPT3-175B" and r["num_gpus"] == "512"


def nemo_2407_overlaps(r):
    return "grad+param+tp" if nemo_2407_mlperf(r) or r["model"] in NEMO_2407_TP_OVERLAP else "grad+param"


# Megatron-Core's defer_embedding_wgrad_compute where dgxc-benchmarking's NeMo configs set it,
# with their wgrad_deferral_limit: llama3.1/llama3.1_70b.yaml 22, llama3.1_405b.yaml 50 and
# nemotron/nemotron4-340b-synth.yaml 22 at both config commits (35a9aecc8d5b, 1b9bb6b3cfea);
# false for Llama 3.1 8B and Nemotron-4 15B, and llama3.1/configure.sh turns it off for the
# 32-GPU 405B proxy (pp 1). Written as overlap "wgrad<limit>". At 85380ffe02 the runs are NeMo 2
# recipes with performance_mode=True, whose pretrain_performance_optimizations set the same
# (NeMo d2b21556f245: llama3_70b.py 22, llama31_405b.py 50, nemotron4_340b.py 22).
DGXC_WGRAD_DEFERRAL = {"Llama 3.1 70B": 22, "Llama 3.1 405B": 50, "Nemotron-4 340B": 22}


def dgxc_wgrad(r):
    if not (dgxc_at(r, DGXC_CONFIG_COMMITS) or dgxc_nemo2(r)) or int(r["pp"] or 1) < 2:
        return ""
    limit = next((v for k, v in DGXC_WGRAD_DEFERRAL.items() if r["model"].startswith(k)), None)
    return "" if limit is None else "+wgrad%d" % limit


def overlaps(r):
    if r["source_id"] == "megatron_bridge_perf_summary" and r["model"].startswith("LLAMA3"):
        return bridge_overlaps(r)
    if r["source_id"] == "nemo_perf_summary_2407":
        return nemo_2407_overlaps(r)
    if r["source_id"] == "dgxc_benchmarking" and r["framework"].startswith("NeMo"):
        return dgxc_overlaps(r) + dgxc_wgrad(r)
    return ""


# fp8 primary weights: the weights kept in fp8 alone and all-gathered in fp8 (Megatron-Core's
# fp8_param_gather, NeMo's fp8_params). dgxc-benchmarking's NeMo 1 runs pass
# +model.fp8_params=$FP8_ENABLED (llama3.1/configure.sh, nemotron/configure.sh) or set
# fp8_params: true (nemo_megatron/gpt3_175b_hydra.yaml) at 35a9aecc8d5b and 1b9bb6b3cfea; its NeMo
# 2 runs (85380ffe02) take bf16_with_fp8_mixed(), which sets fp8_params = True (NeMo d2b21556f245,
# nemo/collections/llm/recipes/precision/mixed_precision.py). NeMo's July 2024 summary: of the
# NeMo-Framework-Launcher 24.07 configs only gpt3/mlperf.yaml (the 512-GPU GPT-3 175B row) sets
# fp8_params: true. Megatron-Bridge's fp8_cs and fp8_mx recipes (bf16_with_fp8_current_scaling_mixed,
# bf16_with_mxfp8_mixed: src/megatron/bridge/training/mixed_precision.py at 7e8111c23 and
# c76eae64e) set fp8_param_gather = True; its nvfp4 recipe sets False.
def fp8_param_gather(r):
    if precision(r["precision"]) != "fp8":
        return ""
    dgxc_nemo = r["source_id"] == "dgxc_benchmarking" and r["framework"].startswith("NeMo")
    on = r["source_id"] == "megatron_bridge_perf_summary" or dgxc_nemo or nemo_2407_mlperf(r)
    return "on" if on or torchao_fp8_all_gather(r) else ""


# torchao's Float8 linears under FSDP2 with enable_fsdp_float8_all_gather (torchtitan's
# --float8.enable_fsdp_float8_all_gather, named in the row's options): each rank casts its
# weight shard to fp8 and the all-gather carries fp8, as fp8_param_gather gathers.
def torchao_fp8_all_gather(r):
    return r["source_id"] == "torchtitan_benchmarks" and "enable_fsdp_float8_all_gather" in r["other_opts"]


# The fp8 scaling recipe of a run (sim/fp8_recipe.h). Megatron-Bridge's performance scripts
# (scripts/performance/argument_parser.py@067f987, --compute_dtype) offer bf16, fp8_cs (current
# scaling: tensorwise), fp8_mx (MXFP8), fp8_sc (sub-channel) and nvfp4; its summaries label rows
# FP8-CS and FP8-MX, or FP8 and MXFP8 (FP8 being the per-tensor one, fp8_cs: the scripts have no
# other). NeMo's fp8 configs (NeMo 1's fp8_amax_history_len and fp8_amax_compute_algo; NeMo 2's
# bf16_with_fp8_mixed(): amax history 1024, "max", nemo/collections/llm/recipes/precision/
# mixed_precision.py) and llm-foundry's 2023 runs (Transformer Engine 1.x, whose only recipe was
# DelayedScaling) scale from the amax history: delayed. Other sources: empty (no Transformer
# Engine recipe stated).
def fp8_recipe(r):
    if precision(r["precision"]) != "fp8":
        return ""
    if r["source_id"] == "megatron_bridge_perf_summary":
        return "mxfp8" if "MX" in r["precision"].upper() else "tensorwise"
    if r["source_id"] in ("dgxc_benchmarking", "nemo_perf_summary_2407", "llmfoundry_mpt_bench",
                          "nemo_long_sequence_perf") and not r["framework"].startswith(("MaxText", "Paxml")):
        return "delayed"
    # torchao's Float8 linears scale each tensor from its own amax unless a recipe is named
    # (torchtitan's float8.recipe_name None: Float8LinearConfig(), tensorwise, at e7c0cae,
    # torchtitan/components/quantization/float8.py); its rowwise recipe has no dejavu name.
    if r["source_id"] == "torchtitan_benchmarks" and "rowwise" not in r["precision"]:
        return "tensorwise"
    if maxtext(r):
        return "delayed"
    return ""


# MaxText's Llama 2 70B runs of dgxc-benchmarking (maxtext/configure.sh at 35a9aecc, container
# 2024.12.09): FSDP inside each server's 8 GPUs and across up to 16 servers (ici_fsdp 8 x dcn_fsdp),
# data parallelism across those groups from 64 servers (dcn_data_parallelism): hybrid sharding of
# sharding_degree GPUs (dejavu's dp_shard) over every GPU as a replica; remat_policy custom saving
# query_proj, key_proj, value_proj, qkv_proj, out_proj (and mlpwo in bf16), MaxText's
# save_dot_except_mlpwi and save_dot_except_mlp, which act alike (workloads/op_sac.h); attention
# cudnn_flash_te (Transformer Engine's fused attention, cuDNN's); weights and so gradients in fp32
# (MaxText/configs/base.yml weight_dtype float32 at 8e55ab1a); fp8 through Flax's Fp8DotGeneralOp,
# scaled from an amax history (delayed). Its Llama 3 70B runs (configure.sh at 85380ffe, container
# 25.01) shard the same way at 8192 tokens and save only the q, k and v projections
# (remat_policy save_qkv_proj). Paxml's rows state no FSDP degree: dejavu skips them.
MAXTEXT_POLICY = {"35a9aecc8d5b17d99d80f52f38c75ade0dbab7ae": "save-dot-except-mlpwi",
                  "85380ffe02eac74e1d07e556b28cdcf7cce2d2f0": "save-qkv-proj"}


def maxtext(r):
    if not r["framework"].startswith("MaxText"):
        return ""
    return next((mode for commit, mode in MAXTEXT_POLICY.items() if "@" + commit in r["source"]), "")


def main(path):
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["row_id", "source", "model", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
                  "seq_len", "gpu", "gpus", "framework", "precision", "tp", "pp", "vp", "cp", "dp", "sharding",
                  "micro_batch", "global_batch", "recompute", "measured_step_s", "attention", "grad_dtype",
                  "pipeline_split", "overlaps", "optimizer_dtype", "server", "held_out", "fp8_param_gather",
                  "fp8_recipe", "cross_entropy", "offload_layers", "dp_shard"])
    for r in csv.DictReader(open(path)):
        config = launcher_config(r)
        if config:
            r["tp"], r["pp"], r["micro_batch_size"], r["global_batch_size_seqs"], r["activation_recompute"] = config
            r["dp"] = str(int(r["num_gpus"]) // (int(config[0]) * int(config[1])))
            r["sharding"] = "distributed optimizer (distributed_fused_adam)"
        layout = bridge_preset_layout(r)
        if layout:
            r["tp"], r["pp"], r["vp_chunks"], r["micro_batch_size"] = layout
            r["dp"] = str(int(r["num_gpus"]) // (int(layout[0]) * int(layout[1]) * int(r["cp"] or 1)))
        step = r["step_time_s"]
        if not step and r["tokens_per_s_total"] and r["global_batch_tokens"]:
            step = "%.6g" % (float(r["global_batch_tokens"]) / float(r["tokens_per_s_total"]))
        if not step and r["tokens_per_s_total"] and r["global_batch_size_seqs"] and r["seq_len"]:
            step = "%.6g" % (float(r["global_batch_size_seqs"]) * float(r["seq_len"]) / float(r["tokens_per_s_total"]))
        model = r["model"].replace(",", ";")
        framework = r["framework"].split(" ")[0].replace(",", ";")
        vocab = r["vocab_size"] or VOCAB_OF_SOURCE.get(r["source_id"], "")
        heads = r["num_attention_heads"] or HEADS_OF_SOURCE.get(r["source_id"], "")
        source, dp_shard = r["source_id"], ""
        if maxtext(r):
            source = "dgxc_maxtext"
            r["sharding"], r["activation_recompute"], r["dp"] = "FSDP", maxtext(r), r["num_gpus"]
            dp_shard = r["sharding_degree"] if r["sharding_degree"] != r["num_gpus"] else ""
        vp = r["vp_chunks"] or (VP_OF_MODEL.get((r["source_id"], r["model"]), "") if gpu(r["gpu_type"]).startswith("H100") else "")
        out.writerow([r["row_id"], source, model, r["num_layers"], r["hidden_size"],
                      heads, r["num_kv_heads"], r["ffn_hidden_size"], vocab,
                      r["seq_len"], gpu(r["gpu_type"]), r["num_gpus"], framework, precision(r["precision"]),
                      r["tp"], r["pp"], vp, r["cp"], r["dp"], "zero3" if maxtext(r) else sharding(r["sharding"]),
                      r["micro_batch_size"], r["global_batch_size_seqs"],
                      recipe_recompute(r) or recompute(r["activation_recompute"], r["source_id"]),
                      step, "unfused" if config else attention(r, framework),
                      grad_dtype(r),
                      pipeline_split(r), overlaps(r), optimizer_dtype(r), server(r),
                      1 if int(r["row_id"]) % 3 == 0 else 0, fp8_param_gather(r), fp8_recipe(r),
                      CROSS_ENTROPY_OF_FRAMEWORK.get(framework, "unfused"), offload_layers(r), dp_shard])


if __name__ == "__main__":
    main(sys.argv[1])
