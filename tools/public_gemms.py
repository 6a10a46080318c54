#!/usr/bin/env python3
"""Writes platforms/calibration/gemm_<gpu>.csv, the GEMM measurements `dejavu calibrate` fits
the shaped GEMM model to, from ../shared/validation/public/gemm_throughput.csv.

A100: the Azure AI benchmarking guide's cuBLASLt fp16 rows (ND A100 v4, A100-SXM4-80GB) and
the ml-engineering MAMF row of the A100 SXM (bf16). H100: XLA's matmul performance table for
sm_90 (bf16, 375 shapes) and the MAMF row of the H100 SXM (bf16). B200: XLA's table for
sm_100 (bf16, 375 shapes) and the B200 SXM's MAMF row. GB200: the same sm_100 table (measured
on a B200: no public shape table times a GB200) and the GB200's own MAMF row. MI300X and
MI325X: the ROCm fork of XLA's table for gfx942 (bf16, 375 shapes; its source names the
MI300X/MI325X class, not the part) and each part's own MAMF row.
fp8 rows go to gemm_<gpu>_fp8.csv (fitted apart: `gemm_fp8`): H100: the Azure AI benchmarking
guide's cuBLASLt fp8 sizes (ND H100 v5) and MAMF's fp8 row of the H100 SXM; H200 (an
out-of-sample check of the H100's fit, same GH100 die): Azure's ND H200 v5 rows and MAMF's H200
row; B200, GB200: XLA's sm_100 fp8 table and each part's MAMF fp8 row (the ROCm fork's fp8
table is not written: docs/CALIBRATION.md says why). seconds = 2 b m n k / measured FLOP/s; bytes: A, B
at the inputs' width and C (bf16 for fp8 inputs) once. Usage: tools/public_gemms.py [path to gemm_throughput.csv]
[output folder]
"""
import csv
import sys

SOURCE = sys.argv[1] if len(sys.argv) > 1 else "../shared/validation/public/gemm_throughput.csv"
OUT = sys.argv[2] if len(sys.argv) > 2 else "platforms/calibration"

def table_and_mamf(title, table, accelerator_part, mamf):
    """A GPU's rows: an XLA shape table's (its accelerator field holding `accelerator_part`)
    and the MAMF row of `mamf`."""
    return (
        title,
        lambda r: (r["source_id"] == table and accelerator_part in r["accelerator"])
        or (r["source_id"] == "mlengineering_mamf" and r["accelerator"] == mamf),
    )


SETS = {
    "a100": (
        "A100 SXM 80GB",
        lambda r: (r["source_id"] == "azure_ai_benchmarking_guide" and "A100-SXM4-80GB" in r["accelerator"])
        or (r["source_id"] == "mlengineering_mamf" and r["accelerator"] == "NVIDIA A100 SXM"),
    ),
    "h100": table_and_mamf("H100 SXM", "xla_matmul_perf_table", "H100", "NVIDIA H100 SXM"),
    "b200": table_and_mamf("B200 SXM", "xla_matmul_perf_table", "B200", "NVIDIA B200 SXM"),
    "gb200": table_and_mamf("GB200 (the B200's shape table and the GB200's best shape)", "xla_matmul_perf_table",
                            "B200", "NVIDIA GB200 SXM"),
    "mi300x": table_and_mamf("MI300X", "xla_matmul_perf_table_rocm", "gfx942", "AMD MI300X"),
    "mi325x": table_and_mamf("MI325X", "xla_matmul_perf_table_rocm", "gfx942", "AMD MI325X"),
}


def dtype_of(text):
    text = text.strip().lower()
    if text.startswith("fp8"):
        return "fp8"
    return text if text in ("bf16", "fp16") else None


def fp8_rows(title, sources, mamf):
    """A GPU's fp8 rows: those of `sources` (source id, part of the accelerator field) and
    the MAMF row of `mamf`."""
    return (
        title,
        lambda r: any(r["source_id"] == s and part in r["accelerator"] for s, part in sources)
        or (r["source_id"] == "mlengineering_mamf" and r["accelerator"] == mamf),
    )


FP8_SETS = {
    "h100": fp8_rows("H100 SXM in fp8", [("azure_ai_benchmarking_guide", "H100 80GB")], "NVIDIA H100 SXM"),
    "h200": fp8_rows("H200 in fp8 (the H100's out-of-sample check)", [("azure_ai_benchmarking_guide", "H200")],
                     "NVIDIA H200 SXM"),
    "b200": fp8_rows("B200 SXM in fp8", [("xla_matmul_perf_table", "B200")], "NVIDIA B200 SXM"),
    "gb200": fp8_rows("GB200 in fp8 (the B200's shape table and the GB200's best shape)",
                      [("xla_matmul_perf_table", "B200")], "NVIDIA GB200 SXM"),
}


def write(rows, name, gpu, keep, want_fp8):
    out = [f"# GEMM throughput of the {gpu}, from ../shared/validation/public/gemm_throughput.csv",
           "# (its README and each row's source column cite where it was measured), written by",
           "# tools/public_gemms.py: seconds = 2 b m n k / measured FLOP/s; bytes: A[m, k], B[k, n] and",
           "# C[m, n] once. `dejavu calibrate` holds out every fifth row and reports the fit's error.",
           "op_class,flops,bytes,dtype,seconds,m,n,k,batch,source_row"]
    for r in rows:
        dtype = dtype_of(r["dtype_inputs"])
        if not keep(r) or dtype is None or (dtype == "fp8") != want_fp8:
            continue
        b, m, n, k = (int(r[c]) for c in ("batch", "M", "N", "K"))
        flops = 2.0 * b * m * n * k
        seconds = flops / (float(r["tflops"]) * 1e12)
        nbytes = b * ((1.0 if want_fp8 else 2.0) * (m * k + k * n) + 2.0 * m * n)
        out.append(f"gemm,{flops:.6g},{nbytes:.6g},{dtype},{seconds:.6g},{m},{n},{k},{b},{r['row_id']}")
    with open(f"{OUT}/{name}.csv", "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"{OUT}/{name}.csv: {len(out) - 5} rows")


def main():
    rows = list(csv.DictReader(open(SOURCE)))
    for key, (gpu, keep) in SETS.items():
        write(rows, f"gemm_{key}", gpu, keep, False)
    for key, (gpu, keep) in FP8_SETS.items():
        write(rows, f"gemm_{key}_fp8", gpu, keep, True)


main()
