#!/usr/bin/env python3
"""Writes a `dejavu calibrate --measurements` CSV from the public attention benchmarks.

Reads ../shared/validation/public/attention_throughput.csv and keeps the forward + backward
rows of one source and one implementation (rows without a value are skipped):

  python3 tools/public_attention.py ATTENTION_CSV SOURCE IMPLEMENTATION OP_CLASS [--causal] [--roofline] > OUT.csv

--causal keeps the causal rows only (what a decoder's training step runs); --roofline leaves
out the head_dim and causal columns, so `dejavu calibrate` fits the class as a roofline, and
counts bytes as the benchmark does (Q, K, V, O and their gradients once): the Triton kernel
runs its 128-wide heads slower than its 64-wide ones, which the fit by head size cannot
express, so it stays a roofline.

The benchmarks (the FlashAttention README figures) run hidden 2048 with batch = 16k / seq_len.
flops follow their convention: forward 4·b·s²·hidden, halved when causal, forward + backward
3.5x the forward; seconds = flops / measured TFLOP/s; bytes: Q, K, V, O and their gradients
once, 2 bytes each.

  platforms/calibration/flash_attention_a100.csv:  fa2_readme_a100 "FlashAttention-2" flash_attention
  platforms/calibration/flash_attention_h100.csv:  fa2_readme_h100 "FlashAttention-2" flash_attention
  platforms/calibration/triton_attention_a100.csv: fa2_readme_a100 "FlashAttention Triton" triton_attention
                                                   --causal --roofline
  platforms/calibration/flash_attention_b200.csv:  mlengineering_upgrade
                                                   "FlashAttention-4 4.0.0b22 beta (HF attn_implementation)" flash_attention
  platforms/calibration/cudnn_attention_h100.csv:  fa3_readme_h100_fwd cuDNN cudnn_attention
                                                   --backward-as-fa2 fa2_readme_h100

--backward-as-fa2 SOURCE takes forward-only rows (the FlashAttention-3 README times cuDNN's
fused attention forward only) to forward + backward by FlashAttention-2's measured ratio at the
same head size, mask and length: the row's forward TFLOP/s times FlashAttention-2's forward +
backward TFLOP/s in SOURCE over its forward TFLOP/s in the row's own source (on the H100 0.76 to
0.98, 0.92 at heads of 128, causal, 8k). The backward is assumed to keep the forward's speed-up
over FlashAttention-2, which no public figure times; rows without both FlashAttention-2 figures
are left out.

The one B200 row (ml-engineering's "when to upgrade GPUs" step decomposition) times the kernel
inside a Llama-3.1-8B training step at 8k tokens (hidden 4096, mbs 1, causal, heads of 128) in
its own convention, 6·s²·hidden per layer forward + backward: its seconds per layer are that
over the TFLOP/s, its flops the benchmarks' 7·s²·hidden (causal, 3.5x the forward).
"""
import csv
import sys

HIDDEN = 2048
TOKENS = 16384
IN_STEP = "fwd+bwd inside a training step"


def rows(path, source, implementation, causal_only, passes=("fwd+bwd", IN_STEP)):
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["source_id"] != source or r["implementation"] != implementation:
                continue
            if causal_only and r["causal"] != "True":
                continue
            if r["pass"] not in passes or not r["tflops"]:
                continue
            yield r


def shape(r):
    return r["head_dim"], r["causal"], r["seq_len"]


# Forward-only rows of `source` made forward + backward by FlashAttention-2's measured ratio at
# the same shape: its forward + backward TFLOP/s in `fa2_source` over its forward TFLOP/s in
# `source` (the module docstring says what is assumed).
def backward_as_fa2(path, source, implementation, causal_only, fa2_source):
    fa2_fwd = {shape(r): float(r["tflops"]) for r in rows(path, source, "FlashAttention-2", False, ("fwd",))}
    fa2_both = {shape(r): float(r["tflops"]) for r in rows(path, fa2_source, "FlashAttention-2", False)}
    for r in rows(path, source, implementation, causal_only, ("fwd",)):
        k = shape(r)
        if k in fa2_fwd and k in fa2_both:
            yield dict(r, tflops="%.6g" % (float(r["tflops"]) * fa2_both[k] / fa2_fwd[k]), **{"pass": "fwd+bwd"})


# One layer's forward + backward of a row: (flops in the README benchmarks' convention, seconds).
def layer_work(r):
    if r["pass"] == IN_STEP:
        # ml-engineering's in-step attention bucket (Llama-3.1-8B at 8k, mbs 1): TFLOP/s in the
        # convention its note gives, 6·s²·d·heads per layer forward + backward, causal.
        s, b, hidden = int(r["seq_len"]), int(r["batch_size"]), int(r["hidden_dim"])
        return 7 * b * s * s * hidden, 6 * b * s * s * hidden / (float(r["tflops"]) * 1e12), b, s, hidden
    s = int(r["seq_len"])
    b = TOKENS // s
    flops = 4 * b * s * s * HIDDEN * (0.5 if r["causal"] == "True" else 1) * 3.5
    return flops, flops / (float(r["tflops"]) * 1e12), b, s, HIDDEN


def main(argv):
    causal_only = "--causal" in argv
    roofline = "--roofline" in argv
    fa2_source = None
    if "--backward-as-fa2" in argv:
        i = argv.index("--backward-as-fa2")
        if i + 1 >= len(argv):
            sys.exit(__doc__)
        fa2_source = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    argv = [a for a in argv if a not in ("--causal", "--roofline")]
    if len(argv) != 5:
        sys.exit(__doc__)
    path, source, implementation, op_class = argv[1:]
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["op_class", "flops", "bytes", "dtype", "seconds"] + ([] if roofline else ["head_dim", "causal"]))
    n = 0
    chosen = (backward_as_fa2(path, source, implementation, causal_only, fa2_source) if fa2_source
              else rows(path, source, implementation, causal_only))
    for r in chosen:
        flops, seconds, b, s, hidden = layer_work(r)
        bytes_ = (8 if roofline else 3 * 4) * b * s * hidden * 2
        head = [] if roofline else [r["head_dim"], r["causal"].lower()]
        out.writerow([op_class, f"{flops:.6g}", f"{bytes_:.6g}", "bf16", f"{seconds:.6g}"] + head)
        n += 1
    if n == 0:
        sys.exit(f"no fwd+bwd rows of {source} / {implementation} in {path}")


if __name__ == "__main__":
    main(sys.argv)
