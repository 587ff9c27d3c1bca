#!/usr/bin/env bash
# core_deps_test.sh [--api HEADER_DIR [--companions "LIB..."]] LIB...:
# each shared library given (libtreduce.so, the core; libtreduce_mpi.so,
# built on it) must load without PLplot and export no figure or plotting
# function: those live in libtreduce_figures, so a program that draws
# nothing links the core alone.  With --api, each must also export only
# the functions the headers of HEADER_DIR name (figures.h aside;
# version.h.in for the generated version.h), trd_fail for
# libtreduce_figures, and the functions the companion libraries given by
# --companions (libtreduce_steady, libtreduce_wire_mpi) import: no other
# internal function a program could come to depend on.
set -euo pipefail
fail=0
api=
companions=
if [ "${1:-}" = --api ]; then api=$2; shift 2; fi
if [ "${1:-}" = --companions ]; then companions=$2; shift 2; fi

# check_api LIB: no exported function that the public headers do not name
check_api() {
  local declared extra
  declared=$(find "$api" \( -name '*.h' -o -name '*.h.in' \) ! -name figures.h \
    -exec grep -ohE '\btrd_[a-z0-9_]+\(' {} + |
    tr -d '(' | sort -u)
  local imported=
  # shellcheck disable=SC2086
  [ -z "$companions" ] || imported=$(nm -D --undefined-only $companions | awk '{print $2}')
  extra=$(nm -D --defined-only "$1" | awk '$3 ~ /^trd_/ {sub(/@.*/, "", $3); print $3}' |
    sort -u | comm -23 - <(printf '%s\ntrd_fail\n%s\n' "$declared" "$imported" | sort -u))
  if [ -n "$extra" ]; then
    echo "FAIL: $1 exports $(wc -l <<<"$extra") functions no public header declares:" \
      "$(head -5 <<<"$extra" | tr '\n' ' ')"
    fail=1
  fi
}

for lib in "$@"; do
  [ -z "$api" ] || check_api "$lib"
  needed=$(readelf -d "$lib" | awk '/\(NEEDED\)/ {print $NF}')
  if grep -qi plplot <<<"$needed"; then
    echo "FAIL: $lib needs PLplot: $(grep -i plplot <<<"$needed" | tr '\n' ' ')"
    fail=1
  fi
  plots=$(nm -D --defined-only "$lib" |
    awk '$3 ~ /^trd_(plot_|legend_|lineplot_|heatmap_|plan_write_gantt)/ {print $3}')
  if [ -n "$plots" ]; then
    echo "FAIL: $lib exports plotting: $(head -5 <<<"$plots" | tr '\n' ' ')"
    fail=1
  fi
done
[ "$fail" -eq 0 ] && echo "core_deps: ok ($*)"
exit "$fail"
