#!/usr/bin/env bash
# core_deps_test.sh LIB...: each shared library given (libtreduce.so, the
# core; libtreduce_mpi.so, built on it) must load without PLplot and export
# no figure or plotting function: those live in libtreduce_figures, so a
# program that draws nothing links the core alone.
set -euo pipefail
fail=0
for lib in "$@"; do
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
