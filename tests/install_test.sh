#!/usr/bin/env bash
# install_test.sh BUILD_DIR LIBDIR CC [FLAGS]: treduce as its users get it.
#   - `cmake --install BUILD_DIR --prefix P` (a temporary P) installs the
#     tool with its manual pages and bash completion, libtreduce,
#     libtreduce_steady, libtreduce_wire_mpi and libtreduce_figures (shared
#     and static), the public headers, their four .pc files, the CMake
#     package, README, LICENSE, CHANGELOG and CITATION.cff and, in MPI
#     builds, libtreduce_mpi.so;
#   - a program outside the source tree is built against P four times -
#     with the README's pkg-config line (its rpath: it runs without
#     LD_LIBRARY_PATH), with pkg-config (shared), with pkg-config --static
#     against libtreduce.a (whose flags are -L and -l, no file paths), and
#     with CMake's find_package(treduce) (it runs without LD_LIBRARY_PATH)
#     - and each run prints the greedy plan's makespan, without loading
#     PLplot, and with no MPI library in its link line or loaded;
#   - a program of the companions (a platform, the MPI wire registered) is
#     built with pkg-config treduce-steady treduce-wire-mpi and with
#     treduce::treduce_steady and treduce::treduce_wire_mpi, and runs;
#   - a program that draws a Gantt chart is built with pkg-config
#     treduce-figures and with treduce::treduce_figures, and each writes it.
# (tests/package_test.sh checks the Debian packages.)
# LIBDIR: the build's CMAKE_INSTALL_LIBDIR; CC and FLAGS: its compiler and
# any flags its objects need at link time (the sanitizers).
set -euo pipefail
build=$(cd "$1" && pwd)
libdir=$2
cc=$3
flags=${4:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/trd-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail=0
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/treduce "$libdir/libtreduce.a" "$libdir/libtreduce.so" include/treduce/treduce.h \
  include/treduce/steady.h "$libdir/pkgconfig/treduce.pc" "$libdir/libtreduce_figures.a" \
  "$libdir/libtreduce_figures.so" include/treduce/figures.h "$libdir/pkgconfig/treduce-figures.pc" \
  "$libdir/cmake/treduce/treduceConfig.cmake" share/doc/treduce/README.md \
  "$libdir/libtreduce_steady.so" "$libdir/libtreduce_steady.a" "$libdir/pkgconfig/treduce-steady.pc" \
  "$libdir/libtreduce_wire_mpi.so" "$libdir/libtreduce_wire_mpi.a" include/treduce/mpi.h \
  "$libdir/pkgconfig/treduce-wire-mpi.pc" \
  share/doc/treduce/LICENSE share/doc/treduce/CHANGELOG.md share/doc/treduce/CITATION.cff; do
  [ -e "$prefix/$f" ] || bad "not installed: $f"
done
if [ -e "$build/man/treduce.1.gz" ]; then # the build made the manual pages (help_docs.cmake)
  for f in "$build"/man/*.1.gz; do
    [ -e "$prefix/share/man/man1/${f##*/}" ] || bad "not installed: share/man/man1/${f##*/}"
  done
  [ -e "$prefix/share/bash-completion/completions/treduce" ] ||
    bad "not installed: share/bash-completion/completions/treduce"
fi
if [ -e "$build/mpi_layer/libtreduce_mpi.so" ]; then # an MPI build
  [ -e "$prefix/$libdir/libtreduce_mpi.so" ] || bad "not installed: libtreduce_mpi.so"
fi
"$prefix/bin/treduce" list | grep -q '^greedy ' || bad "the installed tool does not run"

mkdir "$tmp/app"
cat >"$tmp/app/app.c" <<'EOF'
#include <stdio.h>
#include <treduce/treduce.h>

int main(void)
{
    trd_params p;
    trd_plan *plan;
    trd_params_init(&p);
    p.n = 8;
    if (trd_plan_create(&plan, "greedy", &p) != TRD_OK) {
        fprintf(stderr, "%s\n", trd_errmsg());
        return 1;
    }
    printf("greedy makespan %g\n", trd_plan_makespan(plan));
    trd_plan_free(plan);
    return 0;
}
EOF
cat >"$tmp/app/figs.c" <<'EOF'
#include <stdio.h>
#include <treduce/treduce.h>

int main(int argc, char **argv)
{
    trd_params p;
    trd_plan *plan;
    trd_params_init(&p);
    p.n = 8;
    if (argc != 2 || trd_plan_create(&plan, "greedy", &p) != TRD_OK)
        return 1;
    trd_status st = trd_plan_write_gantt(plan, argv[1]);
    trd_plan_free(plan);
    if (st != TRD_OK) {
        fprintf(stderr, "%s\n", trd_errmsg());
        return 1;
    }
    printf("greedy makespan 5\n");
    return 0;
}
EOF
cat >"$tmp/app/comps.c" <<'EOF'
#include <stdio.h>
#include <treduce/treduce.h>

int main(void)
{
    trd_platform *pf;
    const trd_wire_info *w;
    if (trd_platform_generate(1, 2, &pf) != TRD_OK || trd_wire_register(trd_wire_mpi()) != TRD_OK ||
        trd_wire_find("mpi", &w) != TRD_OK) {
        fprintf(stderr, "%s\n", trd_errmsg());
        return 1;
    }
    int nodes = trd_platform_node_count(pf);
    trd_platform_free(pf);
    printf(nodes > 0 && w->launched ? "greedy makespan 5\n" : "companions failed\n");
    return 0;
}
EOF
want="greedy makespan 5" # n = 8, d = c = 1 (README)
check_run() { # check_run WHAT BINARY [ARG]
  local got
  got=$(LD_LIBRARY_PATH="$prefix/$libdir" "$2" "${@:3}" 2>&1) || true
  [ "$got" = "$want" ] || bad "$1: printed '$got', not '$want'"
}
check_run_alone() { # check_run_alone WHAT BINARY: the same without LD_LIBRARY_PATH
  local got
  got=$(env -u LD_LIBRARY_PATH "$2" 2>&1) || true
  [ "$got" = "$want" ] || bad "$1 (no LD_LIBRARY_PATH): printed '$got', not '$want'"
}
check_gantt() { # check_gantt WHAT BINARY: it draws the chart
  rm -f "$tmp/gantt.svg"
  check_run "$1" "$2" "$tmp/gantt.svg"
  grep -q '<svg' "$tmp/gantt.svg" 2>/dev/null || bad "$1: no SVG Gantt chart written"
}

# The README's line, as written, with P for /opt/treduce.
readme_cc=$(grep -m1 '^cc app\.c' "$(dirname "$0")/../README.md") || bad "README.md has no 'cc app.c' line"
readme_cc=${readme_cc%%#*}
readme_cc=${readme_cc//\/opt\/treduce\/lib/$prefix/$libdir}
if (cd "$tmp/app" && eval "${readme_cc/#cc /$cc $flags }"); then
  check_run_alone "README's pkg-config line" "$tmp/app/a.out"
else
  bad "README's pkg-config line does not build: $readme_cc"
fi

export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
# shellcheck disable=SC2046,SC2086
if $cc $flags -o "$tmp/app/app_pc" "$tmp/app/app.c" $(pkg-config --cflags --libs treduce); then
  check_run "pkg-config" "$tmp/app/app_pc"
  if LD_LIBRARY_PATH="$prefix/$libdir" ldd "$tmp/app/app_pc" | grep -q plplot; then
    bad "pkg-config: a program that draws nothing loads PLplot"
  fi
  if LD_LIBRARY_PATH="$prefix/$libdir" ldd "$tmp/app/app_pc" | grep -qE 'libmpi|libmpich'; then
    bad "pkg-config: a program of libtreduce alone loads an MPI library"
  fi
else
  bad "pkg-config: the program does not build"
fi
for how in "--libs" "--static --libs"; do
  # shellcheck disable=SC2086
  if pkg-config $how treduce | grep -qiE 'mpi|qsopt|gmp|xml'; then
    bad "pkg-config $how treduce names what libtreduce does not need: $(pkg-config $how treduce)"
  fi
done
# shellcheck disable=SC2046,SC2086
if $cc $flags -o "$tmp/app/comps_pc" "$tmp/app/comps.c" \
  $(pkg-config --cflags --libs treduce-steady treduce-wire-mpi); then
  check_run "pkg-config treduce-steady treduce-wire-mpi" "$tmp/app/comps_pc"
else
  bad "pkg-config treduce-steady treduce-wire-mpi: the program does not build"
fi
# shellcheck disable=SC2046,SC2086
if $cc $flags -o "$tmp/app/figs_pc" "$tmp/app/figs.c" $(pkg-config --cflags --libs treduce-figures); then
  check_gantt "pkg-config treduce-figures" "$tmp/app/figs_pc"
else
  bad "pkg-config treduce-figures: the program does not build"
fi
static_libs=$(pkg-config --static --libs treduce)
for flag in $static_libs; do
  case $flag in -L* | -l* | -pthread | -Wl,*) ;; *) bad "pkg-config --static --libs: '$flag' is not a flag" ;; esac
done
# shellcheck disable=SC2046,SC2086
if $cc $flags -o "$tmp/app/app_static" "$tmp/app/app.c" $(pkg-config --cflags treduce) \
  "$prefix/$libdir/libtreduce.a" $(pkg-config --static --libs treduce | sed 's/-ltreduce\b//'); then
  check_run "pkg-config --static" "$tmp/app/app_static"
else
  bad "pkg-config --static: the program does not build against libtreduce.a"
fi
if ldd "$tmp/app/app_static" 2>/dev/null | grep -qE 'libtreduce|libmpi'; then
  bad "pkg-config --static: the program loads libtreduce.so or MPI"
fi

cat >"$tmp/app/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(app C)
find_package(treduce 0.1 REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE treduce::treduce)
add_executable(figs figs.c)
target_link_libraries(figs PRIVATE treduce::treduce_figures)
add_executable(comps comps.c)
target_link_libraries(comps PRIVATE treduce::treduce_steady treduce::treduce_wire_mpi)
EOF
if cmake -S "$tmp/app" -B "$tmp/app/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$flags" >"$tmp/cmake.log" 2>&1 &&
  cmake --build "$tmp/app/build" >>"$tmp/cmake.log" 2>&1; then
  check_run "find_package" "$tmp/app/build/app"
  check_run_alone "find_package" "$tmp/app/build/app"
  check_gantt "find_package treduce::treduce_figures" "$tmp/app/build/figs"
  check_run "find_package treduce::treduce_steady, treduce_wire_mpi" "$tmp/app/build/comps"
else
  bad "find_package(treduce): the program does not build: $(tail -5 "$tmp/cmake.log")"
fi

if [ "$fail" -ne 0 ]; then exit 1; fi
echo "install: ok ($(find "$prefix" ! -type d | wc -l) files)"
