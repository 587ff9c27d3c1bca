#!/usr/bin/env bash
# bootstrap.sh: installs every dependency of treduce from Debian packages.
# Idempotent: does nothing (and needs no network) when all are installed.
set -euo pipefail

packages=(
  gcc clang make cmake pkg-config   # toolchain (gcc and clang must both build it)
  libclang-rt-14-dev                # clang's sanitizers and libFuzzer (make fuzz)
  libcmocka-dev                     # unit-test framework
  libjansson-dev                    # JSON output
  libgsl-dev                        # random distributions and statistics (simulator)
  libplplot-dev plplot-driver-cairo # Gantt charts and plots (pngcairo, svgcairo)
  fonts-dejavu-core                 # a font for the plots' text
  jq                                # JSON checks in tests/cli_test.sh
  libsimgrid-dev g++                # SimGrid baseline of bench/sim (bench/simgrid_binomial.cpp)
  openmpi-bin libopenmpi-dev        # the MPI wire (src/wire_mpi/) and its tests
  libmpich-dev                      # the same built against MPICH (tests/mpi/build_mpich.sh)
  python3-mpi4py python3-numpy      # mpi4py programs under the layer (tests/mpi_layer)
  libqsopt-ex-dev libgmp-dev        # exact rational LP solver and rationals (src/steady)
  libxml2-dev                       # SimGrid platform XML import (src/platform/platform_simgrid.c)
  iproute2                          # ip and tc: treduce testbed's namespaces (tools/testbed_build.c)
  man-db                            # man and lexgrog: the manual pages' test (tests/help_docs_test.sh)
  lintian dpkg-dev file             # the Debian packages: checked (tests/package_test.sh); cpack
                                    # -G DEB runs dpkg-shlibdeps and file
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "bootstrap: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "bootstrap: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
