# Thin wrapper over CMake. `make` builds, `make test` runs the whole suite (a normal build, an
# AddressSanitizer + UndefinedBehaviorSanitizer build, and the controller's concurrency tests
# under ThreadSanitizer), `make sim` replays the default trace.
BUILD      ?= build
ASAN_BUILD ?= build/asan
TSAN_BUILD ?= build/tsan
JOBS       ?= $(shell nproc)
CMAKE_FLAGS ?=
ifeq ($(CI),true)
CMAKE_FLAGS += -DGP_WERROR=ON
endif
DATA ?= ../shared/data/alibaba-gpu-v2023
SEEDS ?= 42-51

.PHONY: all deps build test test-asan test-tsan sim demo bench bench-ctl bench-placement bench-containers bench-services bench-release bench-slurm chaos chaos-ha docs grid format clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

test: build test-asan test-tsan
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The sanitizer build runs the unit tests and the sim contract tests; any report fails them.
# It leaves out the web dashboard (built once, by the normal build).
test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
	    -DGP_SANITIZE=ON -DGP_UI=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    ctest --output-on-failure -j $(JOBS) -L 'unit|integ|fuzz|shim'

# The controller's concurrency tests (label tsan: the HTTP server, the rate limiter, concurrent
# submits, long-polls, faults) under ThreadSanitizer; any report fails them.
TSAN_TARGETS = gpupoold test_http test_ratelimit test_notify test_http_stream test_ctl_intake
test-tsan: deps
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
	    -DGP_TSAN=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TARGETS)
	cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	    ctest --output-on-failure -j $(JOBS) -L tsan

# The full per-replay CSV is kept in out/sim-default/results.csv; the summary is printed.
sim: build
	@mkdir -p out/sim-default
	$(BUILD)/bin/gpupool sim --nodes $(DATA)/openb_node_list_gpu_node.csv \
	    --pods $(DATA)/openb_pod_list_default.csv --policy all --seeds $(SEEDS) \
	    --jobs $(JOBS) --out out/sim-default > /dev/null
	@cat out/sim-default/summary.md

# The main job: a local pool with simulated GPUs and example jobs running on it.
demo: build
	scripts/demo.sh

bench: build
	bench/run.sh
	bench/ctl.sh

bench-ctl: build
	bench/ctl.sh

# libgpcore's placement alone: many request shapes, one mix, a scheduling cycle; BASE=<ref> adds
# a before column (docs/results/placement.md).
bench-placement: build
	BASE=$(BASE) bench/placement.sh

# Containers (root and podman): start overhead against a host process, image pulls from a local
# registry, the memory watch's reaction; writes docs/results/containers.md.
bench-containers: build
	BUILD=$(BUILD) bench/containers.sh

# The proxy's overhead and the autoscaler's reaction (docs/results/services.md).
bench-services: build
	BUILD=$(BUILD) bench/services.sh

# gpupool and Slurm 22.05 side by side (root; installs slurm-wlm): CLI submits by 8 clients and
# the release of a held backlog to 128 running jobs (docs/results/slurm.md).
bench-slurm: build
	BUILD=$(BUILD) bench/slurm.sh
# Release -> running: 128 held-back one-GPU jobs let go at once on 16 mock DGX nodes, timed to
# all Running (docs/results/release.md).
bench-release: build
	BUILD=$(BUILD) bench/release.sh

# Faults injected into a local pool for CHAOS_DURATION seconds, then the invariants (no job lost,
# no GPU double-allocated); then the same on three gpupoold sharing one PostgreSQL, with leader
# kills and PostgreSQL restarts, for CHAOS_HA_DURATION seconds (`chaos-ha` runs that one only;
# skipped, and said so, when PostgreSQL cannot be started). The report is written from the raw
# results even when they fail; a run not made keeps its section of the page.
CHAOS_DURATION ?= 600
CHAOS_HA_DURATION ?= 300
chaos: build
	@rm -f out/bench/chaos.json out/bench/chaos-ha.json; rc=0; \
	BUILD=$(BUILD) bench/chaos.sh --duration $(CHAOS_DURATION) \
	    --results out/bench/chaos.json || rc=$$?; \
	BUILD=$(BUILD) bench/chaos.sh --ha --duration $(CHAOS_HA_DURATION) \
	    --results out/bench/chaos-ha.json || rc=$$?; \
	args=; [ -s out/bench/chaos.json ] && args="--results out/bench/chaos.json"; \
	[ -s out/bench/chaos-ha.json ] && args="$$args --ha-results out/bench/chaos-ha.json"; \
	if [ -n "$$args" ]; then python3 bench/chaos_report.py $$args \
	    --out docs/results/reliability.md; fi; exit $$rc

chaos-ha: build
	@rm -f out/bench/chaos-ha.json; rc=0; BUILD=$(BUILD) bench/chaos.sh --ha \
	    --duration $(CHAOS_HA_DURATION) --results out/bench/chaos-ha.json || rc=$$?; \
	if [ -s out/bench/chaos-ha.json ]; then python3 bench/chaos_report.py \
	    --ha-results out/bench/chaos-ha.json --out docs/results/reliability.md; fi; exit $$rc

# Documents generated from the code.
docs: build
	$(BUILD)/bin/gpupoold-config-doc > docs/config.md
	python3 scripts/alerts_doc.py --out docs/alerts.md

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)
