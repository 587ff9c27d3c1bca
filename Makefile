# The two set-up commands of README.md, and their helpers.
#   make demo   bootstrap, build, run treduce's main job
#   make test   bootstrap, build, run the whole test suite
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: demo test test-sanitize test-mpich build bootstrap bench clean

demo: build
	./$(BUILD)/treduce demo --out $(BUILD)/demo

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 300 -j $(JOBS)

# The suite once more with AddressSanitizer + UndefinedBehaviorSanitizer,
# built with clang (the default build uses gcc): both must stay warning-free.
test-sanitize: bootstrap
	CC=clang cmake -S . -B build-sanitize -DTRD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS)
	cmake --build build-sanitize -j $(JOBS)
	cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp ctest --output-on-failure --timeout 600 -j $(JOBS)

# The MPI transport built and run against MPICH instead of Open MPI.
test-mpich: bootstrap
	bash tests/mpi/build_mpich.sh build-mpich

build: bootstrap
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

bootstrap:
	./scripts/bootstrap.sh

bench: build
	./$(BUILD)/bench/bench_plan

clean:
	rm -rf $(BUILD) build-sanitize build-mpich
