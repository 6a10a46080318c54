"""dejavu from Python, as a notebook would use it (run: make python, then
PYTHONPATH=build/python python3 docs/python_example.py). The test suite runs this file."""
import os
import sys

import dejavu

root = os.environ.get("DEJAVU_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
preset = lambda kind, name: os.path.join(root, kind, "presets", name + ".yaml")

# A plan as a Python dict; the platform and workload from presets.
r = dejavu.simulate(platform=preset("platforms", "dgx-a100-4x8"),
                    workload=preset("workloads", "gpt3-13b"),
                    plan={"tp": 4, "pp": 2, "dp": 4, "global_batch_size": 128, "recompute": "selective",
                          "sequence_parallel": True})
print(f"iteration {r.iteration_time_s:.2f} s, MFU {100 * r.mfu:.1f}%, "
      f"GPU 0 peak memory {r.devices[0].peak_memory_bytes / 1e9:.1f} GB")
assert 1 < r.iteration_time_s < 100 and not r.oom
assert len(r.devices) == 32

# NeMo's step efficiency fitted to its public H100 runs (the file platforms/calibration/steps/
# nemo_h100-sxm-80gb.yaml, by the framework's name): the step its kernels take inside NeMo.
plain = dejavu.simulate(platform=preset("platforms", "dgx-h100-1x8"), workload=preset("workloads", "llama3-8b"),
                        plan=preset("strategies", "tp2-dp4-sp-zero1"))
nemo = dejavu.simulate(platform=preset("platforms", "dgx-h100-1x8"), workload=preset("workloads", "llama3-8b"),
                       plan=preset("strategies", "tp2-dp4-sp-zero1"), calibration=["nemo"])
print(f"Llama 3 8B on a DGX H100: {plain.iteration_time_s:.2f} s, with NeMo's step efficiency "
      f"{nemo.iteration_time_s:.2f} s")
assert nemo.iteration_time_s > plain.iteration_time_s  # NeMo's kernels reach 74% of their speed alone
# A framework without a step calibration of its own takes the typical one (fitted across five
# sources' frameworks, every GPU type): its kernels at 79% of their speed alone.
typical = dejavu.simulate(platform=preset("platforms", "dgx-h200-1x8"), workload=preset("workloads", "llama3-8b"),
                          plan=preset("strategies", "tp2-dp4-sp-zero1"), calibration=["typical"])
print(f"Llama 3 8B on a DGX H200, typical step efficiency: {typical.iteration_time_s:.2f} s")

events = r.timeline()  # a list of dicts (a DataFrame when pandas is installed)
rows = events.to_dict("records") if hasattr(events, "to_dict") else events
busiest = max(rows, key=lambda e: e["end_s"] - e["start_s"])
print(f"{len(rows)} tasks; the longest: {busiest['label']} on {busiest['device']}")

best = dejavu.search(platform=preset("platforms", "dgx-a100-1x8"), workload=preset("workloads", "gpt3-1.3b"),
                     algo="dp", global_batch=32, grad_dtype="fp32")  # gradients kept as Megatron-LM keeps bf16's
print("best plan:", best["best"]["description"], f"{best['best']['iteration_time_s']:.3f} s")
assert best["best"]["plan"]["grad_dtype"] == "fp32", best["best"]["plan"]
# The plan dict has every key the search set: simulated, it is the plan the search scored.
again = dejavu.simulate(platform=preset("platforms", "dgx-a100-1x8"), workload=preset("workloads", "gpt3-1.3b"),
                        plan=best["best"]["plan"])
assert abs(again.iteration_time_s / best["best"]["iteration_time_s"] - 1) < 1e-9, best["best"]["plan"]

# The recomputation modes a framework offers: torchtitan's op-level policy beside full.
titan = dejavu.search(platform=preset("platforms", "dgx-a100-1x8"), workload=preset("workloads", "gpt3-1.3b"),
                      algo="grid", global_batch=32, top=3, recompute=["selective-op", "full"])
assert all("selective" not in ([t["plan"]["recompute"]] if isinstance(t["plan"]["recompute"], str)
                               else t["plan"]["recompute"]) for t in titan["top"]), titan["top"]

rows = dejavu.collectives(platform=preset("platforms", "dgx-a100-1x8"), op="all_reduce", min="64M", max="1G")
print("all-reduce 1 GiB bus bandwidth:", f"{rows[-1]['busbw_Bps'] / 1e9:.0f} GB/s")

try:
    dejavu.simulate(platform=preset("platforms", "dgx-a100-1x8"), workload=preset("workloads", "gpt3-1.3b"),
                    plan={"tp": 3, "dp": 1, "global_batch_size": 8})
    sys.exit("a plan with tp 3 should not simulate")
except dejavu.Error as e:
    print("error, as on the command line:", e)
    assert "tp: 3 does not divide the 16 attention heads" in str(e)
print("ok")
