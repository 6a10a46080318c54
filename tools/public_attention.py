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


def rows(path, source, implementation, causal_only):
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["source_id"] != source or r["implementation"] != implementation:
                continue
            if causal_only and r["causal"] != "True":
                continue
            if r["pass"] not in ("fwd+bwd", IN_STEP) or not r["tflops"]:
                continue
            yield r


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
    argv = [a for a in argv if a not in ("--causal", "--roofline")]
    if len(argv) != 5:
        sys.exit(__doc__)
    path, source, implementation, op_class = argv[1:]
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["op_class", "flops", "bytes", "dtype", "seconds"] + ([] if roofline else ["head_dim", "causal"]))
    n = 0
    for r in rows(path, source, implementation, causal_only):
        flops, seconds, b, s, hidden = layer_work(r)
        bytes_ = (8 if roofline else 3 * 4) * b * s * hidden * 2
        head = [] if roofline else [r["head_dim"], r["causal"].lower()]
        out.writerow([op_class, f"{flops:.6g}", f"{bytes_:.6g}", "bf16", f"{seconds:.6g}"] + head)
        n += 1
    if n == 0:
        sys.exit(f"no fwd+bwd rows of {source} / {implementation} in {path}")


if __name__ == "__main__":
    main(sys.argv)
