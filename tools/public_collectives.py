#!/usr/bin/env python3
"""Writes platforms/validation/nccl_allreduce_multinode.csv, the multi-node all-reduce bus
bandwidths `dejavu validate platforms/validation/nccl_allreduce_multinode.yaml` compares
dejavu's ring with, from ../shared/validation/public/collectives_multinode.csv.

Kept: the multi-node rows whose NCCL ran a ring. ml-engineering's 4-node B200 sweep (AWS
p6-b200, EFA, NCCL 2.27.7, default algorithm with AWS's tuner; its 4-node H200 rows show that
tuner's default is Ring at 4 nodes) and its 4-node H200 row with NCCL_ALGO=allreduce:ring.
Left out, and why: the same H200 run with NVLSTree (NVLink SHARP, which dejavu does not
model) and the one labelled "default -> Ring" (the forced-ring row measures the same);
GCP A3 Mega's 2-node sweep (algorithm not stated; from 512 MiB up its bus bandwidth is above
what a ring can reach over its eight 200 Gb/s NICs, 200 GB/s, so NCCL ran a tree there);
Modal's 2-node OCI row (449.5 GB/s, above the ring bound of eight 400 Gb/s NICs: a tree or
NVLink SHARP); GCP A3-High's row (4 NICs for 8 GPUs, a layout dejavu's NIC-per-GPU servers
do not express, and a 4e9-byte message off the power-of-two sweep); NVIDIA/nccl#812's DGX A100
figure (already in nccl_allreduce_busbw.csv). Intra-node rows are the single-server fits'
(nccl_allreduce_busbw_b200.csv). Usage: tools/public_collectives.py [collectives_multinode.csv]
[output CSV]
"""
import csv
import sys

SOURCE = sys.argv[1] if len(sys.argv) > 1 else "../shared/validation/public/collectives_multinode.csv"
OUT = sys.argv[2] if len(sys.argv) > 2 else "platforms/validation/nccl_allreduce_multinode.csv"

# (accelerator prefix, dejavu GPU type, interconnect text, row filter)
KEEP = [
    ("NVIDIA B200 (AWS p6-b200", "B200-SXM-180GB", "NVLink 5 in a server; AWS EFA v4 8 x 400 Gb/s a server",
     lambda r: True),
    ("NVIDIA H200 (AWS p5en", "H200-SXM-141GB", "NVLink 4 in a server; AWS EFA (p5en) 3200 Gb/s a server",
     lambda r: r["algorithm"].startswith("Ring (NCCL_ALGO")),
]


def main():
    rows = list(csv.DictReader(open(SOURCE, newline="")))
    # dejavu's CSV reader takes no quoting: no field holds a comma.
    out = csv.writer(open(OUT, "w", newline=""), lineterminator="\n", quoting=csv.QUOTE_NONE)
    out.writerow(["gpu", "gpus", "servers", "interconnect", "message_bytes", "busbw_GBps", "source"])
    for r in rows:
        if r["source_id"] != "mlengineering_network" or r["scope"] != "multi-node" or r["collective"] != "all_reduce":
            continue
        for prefix, gpu, interconnect, keep in KEEP:
            if r["accelerator"].startswith(prefix) and keep(r):
                out.writerow([gpu, r["total_ranks"], r["num_nodes"], interconnect, r["message_size_bytes"],
                              r["busbw_GBps"],
                              ("ml-engineering all_reduce_bench.py; NCCL 2.27.7; algorithm " + r["algorithm"] +
                               " (../shared/validation/public/collectives_multinode.csv row " + r["row_id"] + ")")
                              .replace(",", ";")])


if __name__ == "__main__":
    main()
