# The two set-up commands of README.md, and their helpers.
#   make demo   bootstrap, build, run treduce's main job
#   make test   bootstrap, build, run the whole test suite
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# Every build these targets make treats warnings as errors (TRD_WERROR,
# CMakeLists.txt; WERROR=OFF to build anyway).
WERROR ?= ON
DEV_FLAGS = -DTRD_WERROR=$(WERROR)

.PHONY: demo test test-sanitize test-tsan test-mpich test-release build bootstrap bench clean fuzz fuzz-ci

demo: build
	./$(BUILD)/treduce demo --out $(BUILD)/demo

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 300 -j $(JOBS)

# The suite once more with AddressSanitizer + UndefinedBehaviorSanitizer,
# built with clang (the default build uses gcc): both must stay warning-free.
# TRD_TEST_QUICK=1: the MPI end-to-end matrices on fewer process counts
# (tests/mpi/mpi_lib.sh), since an MPI launch under ASan costs ~7 s.
test-sanitize: bootstrap
	CC=clang cmake -S . -B build-sanitize -DTRD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug $(DEV_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-sanitize -j $(JOBS)
	cd build-sanitize && TRD_TEST_QUICK=1 ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 ctest --output-on-failure --timeout 600 -j $(JOBS)

# The MPI layer's threads, lifecycle and nonblocking tests under ThreadSanitizer (clang,
# linked with the layer: a preloaded instrumented layer would be loaded
# into mpirun's own daemons too).  Open MPI itself is not instrumented:
# tests/mpi_layer/tsan_mpi.supp silences the reports inside it, not ours.
TSAN_TESTS = layer_threads_linked layer_lifecycle_linked layer_requests_linked
test-tsan: bootstrap
	CC=clang cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="-fsanitize=thread -O1 -g" \
	  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
	  $(DEV_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS) --target $(TSAN_TESTS)
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/mpi_layer/tsan_mpi.supp" \
	  TRD_TEST_MPI_LIMIT=240 tests/mpi/run_mpi.sh mpirun 3 -x TSAN_OPTIONS build-tsan/tests/mpi_layer/layer_threads_linked 300
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/mpi_layer/tsan_mpi.supp" \
	  TRD_TEST_MPI_LIMIT=240 tests/mpi/run_mpi.sh mpirun 3 -x TSAN_OPTIONS build-tsan/tests/mpi_layer/layer_lifecycle_linked 20
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/mpi_layer/tsan_mpi.supp" \
	  TRD_TEST_MPI_LIMIT=240 tests/mpi/run_mpi.sh mpirun 3 -x TSAN_OPTIONS build-tsan/tests/mpi_layer/layer_requests_linked multiple

# The MPI wire built and run against MPICH instead of Open MPI.
test-mpich: bootstrap
	TRD_WERROR=$(WERROR) bash tests/mpi/build_mpich.sh build-mpich

# A Release build for /usr (-O3, as distributions and users build it: gcc
# warns there where it does not at make test's -O2), warnings as errors,
# and a quick part of the suite on it: the code a warning was in, a planner
# against its oracle, the command line, the manual pages and completion,
# the installed files, and the Debian packages made and linted.
RELEASE_TESTS = ^(test_threads_wire|test_optimality|cli|core_deps|help_docs|install|packages|example_reduce_threads)$$
test-release: bootstrap
	cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
	  $(DEV_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-release -j $(JOBS)
	cd build-release && ctest --output-on-failure --timeout 300 -j $(JOBS) -R '$(RELEASE_TESTS)'

# libFuzzer on the four file parsers (tests/fuzz): platform JSON, SimGrid
# XML, cost files, profiles, FUZZ_SECONDS each (ASan + UBSan, clang).  New
# inputs go to build-fuzz/corpus/<parser>; the seeds stay in tests/fuzz/corpus.
FUZZ_SECONDS ?= 60
FUZZERS = platform_json simgrid_xml costs_file profile_json
fuzz: bootstrap
	CC=clang cmake -S . -B build-fuzz -DTRD_FUZZ=ON -DTRD_MPI=OFF $(DEV_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-fuzz -j $(JOBS) $(addprefix --target fuzz_,$(FUZZERS))
	for f in $(FUZZERS); do \
	  mkdir -p build-fuzz/corpus/$$f && \
	  ASAN_OPTIONS=detect_leaks=1 ./build-fuzz/tests/fuzz/fuzz_$$f build-fuzz/corpus/$$f \
	    tests/fuzz/corpus/$$f -dict=tests/fuzz/$$f.dict -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 || exit 1; \
	done

# The short run of CI: the four parsers, 12 s each.
fuzz-ci:
	$(MAKE) fuzz FUZZ_SECONDS=12

# RelWithDebInfo (-O2 -g): make test's build, the one developers debug.
build: bootstrap
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(DEV_FLAGS) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

bootstrap:
	./scripts/bootstrap.sh

bench: build
	./$(BUILD)/bench/bench_plan

clean:
	rm -rf $(BUILD) build-sanitize build-tsan build-mpich build-fuzz build-release
