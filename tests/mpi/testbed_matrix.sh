#!/usr/bin/env bash
# testbed_matrix.sh LAUNCHER TREDUCE: the MPI correctness matrix of
# cli_run_mpi.sh (every algorithm, the non-commutative checker, JSON
# contract; part "spread") with the ranks spread over the 4 hosts of a
# testbed (tests/data/testbed/four-hosts.json: links of 100 and 40 Mbit/s,
# a router), through testbed_mpirun.sh.  Skipped (exit 77) where network
# namespaces cannot be made; the testbed is removed however the test ends.
set -uo pipefail
launcher=$1
tool=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/testbed_lib.sh
source "$here/testbed_lib.sh"
testbed_require "$launcher"
export TRD_TB_TOOL=$tool TRD_TB_NAME=m$$ TRD_TB_MPIRUN
TRD_TB_MPIRUN=$(command -v "$launcher")
trap '"$tool" testbed down --name "$TRD_TB_NAME" >/dev/null 2>&1' EXIT
"$tool" testbed up -p "$here/../data/testbed/four-hosts.json" --name "$TRD_TB_NAME" || exit 1
"$here/cli_run_mpi.sh" "$here/testbed_mpirun.sh" "$tool" spread
