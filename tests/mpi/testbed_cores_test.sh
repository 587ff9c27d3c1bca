#!/usr/bin/env bash
# testbed_cores_test.sh LAUNCHER TREDUCE BENCH_MPI_LAYER LAYER_LIB: hosts
# of several ranks on real network namespaces (docs/TESTBED.md, "A host
# is a node"), on tests/data/testbed/two-core-hosts.json (4 hosts of 2
# cores on a switch):
#   - "cores" refused on a router, below 1, or not an integer (exit 2);
#   - show: 8 cores, 2 per host;
#   - placement: block by default (ranks 0 and 1 on A, ...), round-robin
#     on request; the ranks of one host share its host name (the node's)
#     and its /dev/shm, which is neither another host's nor this
#     machine's;
#   - an ordinary MPI program (bench_mpi_layer: barriers, MPI_Reduce and
#     MPI_Allreduce, its results checked) on 8 ranks with Open MPI's
#     shared-memory transport between the ranks of each host, without and
#     with libtreduce_mpi.so (on one /dev/shm and host name for all hosts
#     it crashed in vader);
#   - treduce run --wire mpi, the non-commutative matrix checker, over the
#     8 ranks.
# Skipped (exit 77) where namespaces cannot be made; the testbed, named
# after this run's pid, is removed however the test ends.
set -uo pipefail
launcher=$1
tool=$2
bench=$3
layer=$4
here=$(cd "$(dirname "$0")" && pwd)
platform=$here/../data/testbed/two-core-hosts.json
out=${TMPDIR:-/tmp}/treduce-testbed-cores.$$
# shellcheck source=SCRIPTDIR/../cli_lib.sh
source "$here/../cli_lib.sh"
# shellcheck source=SCRIPTDIR/testbed_lib.sh
source "$here/testbed_lib.sh"
testbed_require "$launcher"
tb=n$$
cleanup() {
  "$tool" testbed down --name "$tb" >/dev/null 2>&1
  "$tool" testbed down --name "b$$" >/dev/null 2>&1
  rm -rf "$out"
}
trap cleanup EXIT
mkdir -p "$out"
export TMPDIR=$out # Open MPI's session folders: this run's own
run() { timeout 120 "$tool" testbed run --name "$tb" --mpirun "$launcher" "$@"; }

# --- bad input ---------------------------------------------------------------
jq '.nodes[4].cores = 2' "$platform" >"$out/router.json"
expect 2 "router 'S' has no cores" -- "$tool" testbed up -p "$out/router.json" --name "b$$"
jq '.nodes[0].cores = 0' "$platform" >"$out/zero.json"
expect 2 "cores of node 'A' must be 1 to 1000000, not 0" -- \
  "$tool" testbed up -p "$out/zero.json" --name "b$$"
jq '.nodes[1].cores = "2"' "$platform" >"$out/text.json"
expect 2 "nodes\[1\] 'B': \"cores\" must be an integer" -- \
  "$tool" testbed up -p "$out/text.json" --name "b$$"
expect 2 "invalid --placement 'blocks': block or round-robin" -- \
  "$tool" testbed run --name "b$$" --placement blocks -- true

# --- up, show -----------------------------------------------------------------
expect 0 'hosts \(8 cores\)' -- "$tool" testbed up -p "$platform" --name "$tb"
"$tool" testbed show --name "$tb" --format json >"$out/show.json"
jcheck '.cores == 8 and ([.nodes[] | select(.router | not) | .cores] == [2, 2, 2, 2])
        and ([.nodes[] | select(.router) | .cores] == [0])' "$out/show.json"

# --- placement and what the ranks of a host share -------------------------------
# place ARGS...: "rank hostname dev-of-/dev/shm" of every rank, by rank
place() {
  run "$@" -- sh -c 'echo "$OMPI_COMM_WORLD_RANK $(hostname) $(stat -c %d /dev/shm)"' |
    sort -n
}
mine=$(stat -c %d /dev/shm)
place >"$out/block" 2>"$out/err" || bad "block placement: $(tail -3 "$out/err")"
want=$'0 A\n1 A\n2 B\n3 B\n4 C\n5 C\n6 D\n7 D'
got=$(cut -d' ' -f1,2 "$out/block")
[ "$got" = "$want" ] && ok || bad "block placement: $(tr '\n' ' ' <"$out/block")"
# one /dev/shm per host: as many devices as hosts, none this machine's
devs=$(awk '{print $2, $3}' "$out/block" | sort -u | awk '{print $2}' | sort -u | wc -l)
pairs=$(awk '{print $2, $3}' "$out/block" | sort -u | wc -l)
if [ "$devs" -eq 4 ] && [ "$pairs" -eq 4 ] && ! awk -v m="$mine" '$3 == m {f = 1} END {exit !f}' "$out/block"; then
  ok
else
  bad "/dev/shm per host (this machine's is $mine): $(tr '\n' ' ' <"$out/block")"
fi
place --placement round-robin >"$out/rr" 2>"$out/err" || bad "round-robin: $(tail -3 "$out/err")"
want=$'0 A\n1 B\n2 C\n3 D\n4 A\n5 B\n6 C\n7 D'
got=$(cut -d' ' -f1,2 "$out/rr")
[ "$got" = "$want" ] && ok || bad "round-robin placement: $(tr '\n' ' ' <"$out/rr")"
# nothing of the hosts' /dev/shm is left in this machine's
[ -z "$(find /dev/shm -maxdepth 1 -name "vader_segment.[ABCD].*" 2>/dev/null)" ] && ok ||
  bad "a host's shared memory is in this machine's /dev/shm"

# --- an ordinary MPI program, Open MPI's shared memory within each host ------------
sizes=8,65536,1048576
for kind in reduce allreduce; do
  run -- "$bench" --kind "$kind" --sizes "$sizes" --seconds 0.05 >"$out/plain" 2>"$out/err"
  [ "$(wc -l <"$out/plain")" -eq 3 ] && ok ||
    bad "plain MPI_${kind^}: $(tail -4 "$out/err" | tr '\n' ' ')"
  run -- env LD_PRELOAD="$layer" TREDUCE_MPI_STATS=1 "$bench" --kind "$kind" --sizes "$sizes" \
    --seconds 0.05 >"$out/layer" 2>"$out/err"
  [ "$(grep -c '^[0-9]' "$out/layer")" -eq 3 ] && ok ||
    bad "MPI_${kind^} under the layer: $(tail -4 "$out/err" | tr '\n' ' ')"
done

# --- treduce's own runs over the 8 ranks, non-commutative ----------------------------
run -- "$tool" run --wire mpi --algo binomial --count 20000 --op matrix --iters 2 \
  --format json >"$out/reduce.json" 2>"$out/err" || bad "reduce: $(tail -3 "$out/err")"
jcheck '.verified == true and .p == 8' "$out/reduce.json"
run -- "$tool" run --wire mpi --algo rabenseifner --allreduce --count 20001 --op matrix --iters 2 \
  --format json >"$out/allreduce.json" 2>"$out/err" || bad "allreduce: $(tail -3 "$out/err")"
jcheck '.verified == true and .p == 8 and .allreduce == true' "$out/allreduce.json"
# the nodes learnt from MPI (4 hosts), and node-ring planned for them: a
# sum of powers of two checks that every rank's data came in once
for placement in block round-robin; do
  run --placement "$placement" -- "$tool" run --wire mpi --algo node-ring --allreduce \
    --count 30001 --op sum --type int64 --iters 2 --format json >"$out/nodes.json" 2>"$out/err" ||
    bad "node-ring ($placement): $(tail -3 "$out/err")"
  jcheck '.verified == true and .p == 8 and .nodes == 4 and .algo == "node-ring"' "$out/nodes.json"
done

echo "testbed_cores: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
