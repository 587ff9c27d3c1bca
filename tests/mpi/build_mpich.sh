#!/usr/bin/env bash
# build_mpich.sh [BUILD_DIR]: builds treduce, the MPI wire test and the MPI
# layer (libtreduce_mpi.so and its tests) and the runtime's correctness
# matrix against MPICH instead of the default Open MPI (both must build:
# the MPI wire is written against the standard, not one library), then
# runs those tests with MPICH's launcher (2 and 3 processes: MPICH
# busy-polls, more would crowd 2 cores).  Debian's
# libmpich-dev provides the wrapper mpicc.mpich and mpiexec.mpich; override
# them with MPICH_CC and MPICH_EXEC.  Warnings are errors (TRD_WERROR=OFF:
# not).  Exit 77 when MPICH is not installed.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build-mpich}
mpicc=${MPICH_CC:-/usr/bin/mpicc.mpich}
mpiexec=${MPICH_EXEC:-/usr/bin/mpiexec.mpich}
if [ ! -x "$mpicc" ] || [ ! -x "$mpiexec" ]; then
  echo "SKIP: MPICH not found ($mpicc, $mpiexec; apt-get install libmpich-dev)"
  exit 77
fi
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRD_WERROR="${TRD_WERROR:-ON}" \
  -DMPI_C_COMPILER="$mpicc" -DMPIEXEC_EXECUTABLE="$mpiexec"
cmake --build "$build" -j "$(nproc)" --target test_wire_mpi test_runtime_matrix_mpi test_requests_mpi \
  reduce_mpi treduce_tool treduce_mpi mpi_layer_programs
cd "$build" && ctest -R "mpi_wire|mpi_runtime_matrix_np[23]|mpi_requests|example_reduce_mpi|mpi_layer" --output-on-failure
# the tool itself over MPICH: 2 processes (MPICH busy-polls: no more on 2 cores)
out=$(timeout 60 "$mpiexec" -np 2 ./treduce run --wire mpi --algo fibonacci \
  --count 1001 --op matrix --iters 2 --format json)
grep -q '"verified": true' <<<"$out"
echo "MPICH: treduce run --wire mpi verified"
