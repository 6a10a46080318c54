#!/usr/bin/env python3
"""Writes platforms/calibration/gemm_<gpu>.csv, the GEMM measurements `dejavu calibrate` fits
the shaped GEMM model to, from ../shared/validation/public/gemm_throughput.csv.

A100: the Azure AI benchmarking guide's cuBLASLt fp16 rows (ND A100 v4, A100-SXM4-80GB) and
the ml-engineering MAMF row of the A100 SXM (bf16). H100: XLA's matmul performance table for
sm_90 (bf16, 375 shapes) and the MAMF row of the H100 SXM (bf16). B200: XLA's table for
sm_100 (bf16, 375 shapes) and the B200 SXM's MAMF row. GB200: the same sm_100 table (measured
on a B200: no public shape table times a GB200) and the GB200's own MAMF row. MI300X and
MI325X: the ROCm fork of XLA's table for gfx942 (bf16, 375 shapes; its source names the
MI300X/MI325X class, not the part) and each part's own MAMF row. fp8 rows are left out
(no fp8 GEMM runs in a bf16 step). seconds = 2 b m n k / measured FLOP/s; bytes: A, B and C
once. Usage: tools/public_gemms.py [path to gemm_throughput.csv] [output folder]
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
    return text if text in ("bf16", "fp16") else None


def main():
    rows = list(csv.DictReader(open(SOURCE)))
    for key, (gpu, keep) in SETS.items():
        out = [f"# GEMM throughput of the {gpu}, from ../shared/validation/public/gemm_throughput.csv",
               "# (its README and each row's source column cite where it was measured), written by",
               "# tools/public_gemms.py: seconds = 2 b m n k / measured FLOP/s; bytes: A[m, k], B[k, n] and",
               "# C[m, n] once. `dejavu calibrate` holds out every fifth row and reports the fit's error.",
               "op_class,flops,bytes,dtype,seconds,m,n,k,batch,source_row"]
        for r in rows:
            dtype = dtype_of(r["dtype_inputs"])
            if not keep(r) or dtype is None:
                continue
            b, m, n, k = (int(r[c]) for c in ("batch", "M", "N", "K"))
            flops = 2.0 * b * m * n * k
            seconds = flops / (float(r["tflops"]) * 1e12)
            nbytes = 2.0 * b * (m * k + k * n + m * n)
            out.append(f"gemm,{flops:.6g},{nbytes:.6g},{dtype},{seconds:.6g},{m},{n},{k},{b},{r['row_id']}")
        with open(f"{OUT}/gemm_{key}.csv", "w") as f:
            f.write("\n".join(out) + "\n")
        print(f"{OUT}/gemm_{key}.csv: {len(out) - 5} rows")


main()
