# A thin front door: everything real lives in CMake.
BUILD ?= build
JOBS  ?= 2
DEMO  = --platform platforms/presets/dgx-a100-4x8.yaml \
        --workload workloads/presets/gpt3-13b.yaml \
        --plan strategies/presets/tp4-pp2-dp4-1f1b.yaml

.PHONY: deps build demo test asan fuzz bench validate validate-fp8 step-calibrations typical-calibration python snapshots docs format format-check long-functions clean

deps:
	@tools/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	@mkdir -p $(BUILD)/demo
	$(BUILD)/tools/dejavu simulate $(DEMO) --json $(BUILD)/demo/report.json --trace $(BUILD)/demo/trace.json --report $(BUILD)/demo/report.html
	@echo "report: $(BUILD)/demo/report.html (open in a browser), $(BUILD)/demo/report.json   trace (open in ui.perfetto.dev): $(BUILD)/demo/trace.json"

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# The whole suite built with AddressSanitizer and UndefinedBehaviorSanitizer, compiled as unity
# batches of 8 files (a clean build on 2 cores in 7.3 minutes, not 15; `make test` keeps one file
# at a time, so a file missing an include still fails there).
asan: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -g1" -DDEJAVU_SANITIZE=ON \
	  -DDEJAVU_BUILD_BENCH=OFF -DDEJAVU_BUILD_PYTHON=OFF -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 >/dev/null
	@cmake --build build-asan -j$(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j$(JOBS)

# libFuzzer targets (clang) under both sanitizers; tools/fuzz.sh SECONDS runs them.
fuzz:
	@tools/install-deps.sh --with-fuzz
	@CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDEJAVU_SANITIZE=ON -DDEJAVU_FUZZ=ON \
	  -DDEJAVU_BUILD_BENCH=OFF >/dev/null
	@cmake --build build-fuzz -j$(JOBS) --target $(addprefix fuzz_,platform workload plan faults csv chakra text sweep)

# .clang-format over every C++ file; the check (also a ctest test) lists files that differ.
format:
	tools/format.sh

format-check:
	tools/format.sh --check

# Library functions over 80 lines (also a ctest test).
long-functions:
	tools/long_functions.sh

docs: build
	tools/docs.sh $(BUILD)/tools/dejavu

snapshots: build
	tools/snapshots.sh $(BUILD)/tools/dejavu
	@git status --short tests/snapshots

python: build
	@echo "module: $(BUILD)/python (PYTHONPATH=$(BUILD)/python python3 docs/python_example.py)"

# Every step-time suite in one fit / held-out table; their rows are the residuals simulate's
# error bars come from (strategies/validation/residuals.csv, embedded at the next build).
# The public suites come twice: as they are, and with their framework's step efficiency
# (public/calibrated/, fitted to the fit rows by `make step-calibrations`).
STEP_SUITES = strategies/validation/megatron_seqpar_selective_a100.yaml $(sort $(wildcard strategies/validation/public/*.yaml)) \
              $(sort $(wildcard strategies/validation/public/calibrated/*.yaml)) \
              $(sort $(wildcard strategies/validation/public/typical/*.yaml))
validate: build
	$(BUILD)/tools/dejavu validate platforms/validation/nccl_allreduce_busbw.yaml
	$(BUILD)/tools/dejavu validate platforms/validation/nccl_allreduce_multinode.yaml
	$(BUILD)/tools/dejavu validate strategies/validation/megatron_seqpar_selective_a100_calibrated.yaml
	$(BUILD)/tools/dejavu validate --jobs $(JOBS) --summary --residuals strategies/validation/residuals.csv $(STEP_SUITES) $(FP8_SUITES)
	@echo "wrote strategies/validation/residuals.csv (simulate's error bars, by GPU type and precision; the next build embeds it)"

# fp8 and fp4 training rows (public/fp8/): out of sample; their residuals give fp8/fp4 runs their bands.
FP8_SUITES = $(sort $(wildcard strategies/validation/public/fp8/*.yaml)) \
             $(sort $(wildcard strategies/validation/public/fp8/calibrated/*.yaml)) \
             $(sort $(wildcard strategies/validation/public/fp8/typical/*.yaml))
validate-fp8: build
	$(BUILD)/tools/dejavu validate --jobs $(JOBS) --summary $(FP8_SUITES)

# Each framework's step efficiency per GPU type, fitted to its public suite's fit rows
# (platforms/calibration/steps/; about 45 minutes on 2 cores). Blackwell's come from Megatron-Bridge's
# fp8/fp4 rows, the only Blackwell training rows. Rerun `make validate` after it.
STEP_FITS = llmfoundry_mpt_bench:H100-SXM-80GB:llm-foundry_h100-sxm-80gb \
            llmfoundry_mpt_bench:A100-SXM-80GB:llm-foundry_a100-sxm-80gb \
            llmfoundry_mpt_bench:A100-SXM-40GB:llm-foundry_a100-sxm-40gb \
            bigscience_bloom_prequel:A100-SXM-80GB:megatron-deepspeed_a100-sxm-80gb \
            mtnlg_via_llm_analysis:A100-SXM-80GB:megatron-deepspeed-mtnlg_a100-sxm-80gb \
            dgxc_benchmarking:H100-SXM-80GB:nemo_h100-sxm-80gb \
            dgxc_maxtext:H100-SXM-80GB:maxtext_h100-sxm-80gb \
            fp8/megatron_bridge_perf_summary:GB200-186GB:megatron-bridge_gb200-186gb \
            fp8/megatron_bridge_perf_summary:B200-SXM-180GB:megatron-bridge_b200-sxm-180gb \
            fp8/megatron_bridge_perf_summary:GB300-288GB:megatron-bridge_gb300-288gb
step-calibrations: build
	@for f in $(STEP_FITS); do set -- $$(echo $$f | tr : ' '); \
	  $(BUILD)/tools/dejavu calibrate --jobs $(JOBS) --suite strategies/validation/public/$$1.yaml --gpu $$2 \
	    -o platforms/calibration/steps/$$3.yaml || exit 1; done

# The typical step efficiency (platforms/calibration/steps/typical_any.yaml, `--calibration typical`):
# fitted to the 16-bit fit rows of the five sources with fit rows of their own framework (the kept-back
# NeMo launcher tables aside), each weighing alike, for every GPU type; then each source left out
# in turn and judged by the other four's fit (about 25 minutes on 2 cores). Rerun `make validate`.
TYPICAL_SUITES = $(addprefix strategies/validation/public/,bigscience_bloom_prequel.yaml dgxc_benchmarking.yaml \
                 dgxc_maxtext.yaml llmfoundry_mpt_bench.yaml mtnlg_via_llm_analysis.yaml)
typical-calibration: build
	$(BUILD)/tools/dejavu calibrate --jobs $(JOBS) $(addprefix --suite ,$(TYPICAL_SUITES)) --gpu any --leave-one-out \
	  -o platforms/calibration/steps/typical_any.yaml

bench: build
	$(BUILD)/bench/simulate_benchmark
	$(BUILD)/bench/simgrid_benchmark
	$(BUILD)/bench/search_benchmark
	$(BUILD)/bench/scale_benchmark
	$(BUILD)/bench/cluster_benchmark

clean:
	rm -rf $(BUILD)
