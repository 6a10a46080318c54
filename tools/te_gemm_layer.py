#!/usr/bin/env python3
"""Derives, from Transformer Engine's published per-layer GEMM times
(platforms/calibration/te_gemm_layer.csv, which cites them), the figures dejavu takes for
narrow GEMMs on Hopper and Blackwell (platforms/gpu_catalog.cc):

- quantize_fp8 per scaling recipe, quantize_fp4: what Transformer Engine's quantization of a
  GEMM's inputs costs, as the share of HBM bandwidth at which the casts' bytes (read 16-bit,
  write narrow: 3 bytes an element in fp8, 2.5 in fp4) would move. Each row's cost is its
  autocast time less its prequantized time; each benchmarked call quantizes its input (m x k)
  and its weight (k x n). FP8 delayed scaling has no prequantized time: its cost is taken
  against current scaling's (tensorwise) kernel-only time, the same per-tensor scaled GEMM.
  Hopper (the H200's, HBM 4.8 TB/s) has tensorwise and delayed; Blackwell (the B300's) has
  those and MXFP8.
- gemm_mxfp8: MXFP8's block-scaled GEMM kernels against the per-tensor scaled fp8 ones on the
  same shapes (prequantized): their time ratio, which divides the fp8 GEMMs' e_max.
- gemm_fp4 (GB300): NVFP4 GEMM kernels against bf16 ones on the same shapes, prequantized,
  priced by dejavu's shaped GEMM model (fp4_fit says how). The speed ratio measured on the
  B300 is taken for the GB300, the same Blackwell Ultra die (quoted peaks: bf16 2250 and NVFP4
  15000 TFLOP/s on the B300, 2500 and 15000 on the GB300).

Fprop and Dgrad rows are fitted, Wgrad rows held out (the split is fixed here, before the
fit). Usage: tools/te_gemm_layer.py [te_gemm_layer.csv]
"""
import csv
import sys

PATH = sys.argv[1] if len(sys.argv) > 1 else "platforms/calibration/te_gemm_layer.csv"
HBM = {"B300": 8.0e12, "H200": 4.8e12}  # bytes/s: ml-engineering@744d01e's memory table
LAUNCH = 2e-6  # s, a kernel launch as dejavu prices one (platforms/gpu_catalog.h's MeasuredKernel)
TOKENS, HIDDEN, MLP = 15872, 4096, 16384
# Each pass's four te.Linear calls, (m, k, n): the tutorial's Fprop, Dgrad and Wgrad shapes.
CALLS = {
    "fprop": [(TOKENS, HIDDEN, 3 * HIDDEN), (TOKENS, HIDDEN, HIDDEN), (TOKENS, HIDDEN, MLP), (TOKENS, MLP, HIDDEN)],
    "dgrad": [(TOKENS, 3 * HIDDEN, HIDDEN), (TOKENS, HIDDEN, HIDDEN), (TOKENS, MLP, HIDDEN), (TOKENS, HIDDEN, MLP)],
    "wgrad": [(HIDDEN, TOKENS, 3 * HIDDEN), (HIDDEN, TOKENS, HIDDEN), (HIDDEN, TOKENS, MLP), (MLP, TOKENS, HIDDEN)],
}
FIT, HELD = ("fprop", "dgrad"), ("wgrad",)
NARROW_BYTES = {"fp8_current": 1.0, "fp8_delayed": 1.0, "mxfp8": 1.0, "nvfp4": 0.5}
GB300_PEAK = {"bf16": 2500e12, "fp4": 15000e12}  # FLOP/s, dense (platforms/gpu_catalog.cc)
BF16_FIT = (0.631326, 192)  # the GB200's (and GB300's) bf16 GEMM fit: e_max, k_fill


def elements(pass_):
    return sum(m * k + k * n for m, k, n in CALLS[pass_])


def load():
    ms = {}
    with open(PATH) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            ms[(r["gpu"], r["mode"], r["pass"], r["precision"])] = float(r["ms"]) * 1e-3
    return ms


def kernel_only(ms, gpu, p, prec):
    """The GEMM kernels' time alone; delayed scaling's is current scaling's (the same kernel)."""
    return ms[(gpu, "prequantized", p, "fp8_current" if prec == "fp8_delayed" else prec)]


def quantize_share(ms, gpu, prec):
    """The share of `gpu`'s HBM bandwidth the casts' bytes move at: fitted on FIT, checked on HELD.
    dejavu adds a launch (LAUNCH) to each GEMM's casts: the bytes move in the cost less those."""
    def rows(passes):
        for p in passes:
            cost = ms[(gpu, "autocast", p, prec)] - kernel_only(ms, gpu, p, prec) - LAUNCH * len(CALLS[p])
            yield p, elements(p) * (2 + NARROW_BYTES[prec]), cost
    fit = list(rows(FIT))
    share = sum(b for _, b, _ in fit) / (HBM[gpu] * sum(c for _, _, c in fit))
    err = lambda rs: [b / (HBM[gpu] * share) / c - 1 for _, b, c in rs]
    held = err(list(rows(HELD)))
    print(f"{gpu} quantize {prec}: {share:.4f} of HBM; fit " + " ".join(f"{100 * e:+.1f}%" for e in err(fit)) +
          f", held out {' '.join(f'{100 * e:+.1f}%' for e in held)}")
    for p, b, c in rows(FIT + HELD):
        print(f"  {p}: {c * 1e3:.3f} ms for {elements(p) / 1e6:.0f}M elements, {b / c / 1e12:.2f} TB/s")
    return share


def mxfp8_gemm(ms):
    """MXFP8's block-scaled GEMM kernels against the per-tensor scaled ones (prequantized)."""
    ratio = lambda passes: sum(ms[("B300", "prequantized", p, "mxfp8")] for p in passes) / sum(
        ms[("B300", "prequantized", p, "fp8_current")] for p in passes)
    r = ratio(FIT)
    print(f"B300 mxfp8 GEMM kernels {r:.4f}x the per-tensor fp8 ones' time (fit); held out: dejavu "
          f"{r:.4f}x, measured {ratio(HELD):.4f}x ({100 * (r / ratio(HELD) - 1):+.1f}%)")
    return r


def fp4_fit(ms):
    """gemm_fp4 on the GB300: dejavu's shaped GEMM time, 2 m n (k + k_fill) / (peak e_max), with
    the GB300's bf16 fit (the GB200's: e_max 0.631326, k_fill 192). A tile's fill and drain (its
    bf16 output written) take the same time in fp4 as in bf16, so in fp4's faster depth terms
    k_fill grows with the speed: k_fill_fp4 = 192 x (fp4 speed / bf16 speed). e_max alone is
    solved so that the fitted passes' bf16-to-fp4 time ratio is the measured one."""
    e16, k16, p16, p4 = BF16_FIT + (GB300_PEAK["bf16"], GB300_PEAK["fp4"])
    gemms = lambda p, peak, e, k: sum(2 * m * n * (kk + k) / (peak * e) for m, kk, n in CALLS[p])
    fill = lambda e4: k16 * (p4 * e4) / (p16 * e16)
    ratio = lambda passes, e4: sum(gemms(p, p16, e16, k16) for p in passes) / sum(
        gemms(p, p4, e4, fill(e4)) for p in passes)
    measured = lambda passes: sum(ms[("B300", "prequantized", p, "bf16")] for p in passes) / sum(
        ms[("B300", "prequantized", p, "nvfp4")] for p in passes)
    lo, hi = 0.01, 1.0  # ratio falls as e4 falls: bisect
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ratio(FIT, mid) < measured(FIT) else (lo, mid)
    e4 = (lo + hi) / 2
    print(f"B300 nvfp4 GEMMs {measured(FIT):.3f}x bf16 (fit), {measured(HELD):.3f}x (held out): GB300 gemm_fp4 "
          f"e_max {e4:.6f}, k_fill {fill(e4):.1f}")
    for p in FIT + HELD:
        print(f"  {p}: dejavu {ratio((p,), e4):.3f}x, measured {measured((p,)):.3f}x "
              f"({100 * (ratio((p,), e4) / measured((p,)) - 1):+.1f}%)")
    for prec in ("fp8_current", "mxfp8"):
        speedup = sum(ms[("B300", "prequantized", p, "bf16")] / 3 for p in FIT + HELD) / sum(
            ms[("B300", "prequantized", p, prec)] / 3 for p in FIT + HELD)
        print(f"  for comparison, {prec}: {speedup:.3f}x bf16 (peak ratio 2)")
    return e4


def main():
    ms = load()
    for prec in ("fp8_delayed", "fp8_current", "mxfp8", "nvfp4"):
        quantize_share(ms, "B300", prec)
    for prec in ("fp8_delayed", "fp8_current"):
        quantize_share(ms, "H200", prec)
    mxfp8_gemm(ms)
    fp4_fit(ms)


if __name__ == "__main__":
    main()
