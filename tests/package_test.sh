#!/usr/bin/env bash
# package_test.sh BUILD_DIR: the Debian packages of `cpack -G DEB`
# (cmake/install.cmake), from a build configured with the prefix /usr:
#   - one package per shared library (libtreduce0, libtreduce-steady0,
#     libtreduce-wire-mpi0, libtreduce-figures0 and, in MPI builds,
#     libtreduce-mpi0), libtreduce-dev and treduce, with the same version;
#   - lintian finds no error and no warning in them (it prints what it
#     finds, informational tags too);
#   - together they hold exactly the files of `cmake --install` (under
#     /usr), but for the license and changes, which every package has as
#     its own copyright and changelog files (Debian's format, of this
#     version);
#   - what draws figures (treduce, libtreduce-figures0) depends on PLplot's
#     cairo driver, libtreduce-dev on every library package of this
#     version, the libraries on top of libtreduce0 on its version, and apt
#     could install them all here.
set -euo pipefail
build=$(cd "$1" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/trd-package.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

if ! (cd "$tmp" && cpack -G DEB -B "$tmp/pkg" --config "$build/CPackConfig.cmake") \
  >"$tmp/cpack.log" 2>&1; then
  echo "FAIL: cpack -G DEB failed:"; tail -20 "$tmp/cpack.log"; exit 1
fi
mapfile -t debs < <(ls "$tmp"/pkg/*.deb)
names=$(for d in "${debs[@]}"; do dpkg-deb -f "$d" Package; done | sort | tr '\n' ' ')
mpi=
[ ! -e "$build/mpi_layer/libtreduce_mpi.so" ] || mpi="libtreduce-mpi0 "
want="libtreduce-dev libtreduce-figures0 ${mpi}libtreduce-steady0 libtreduce-wire-mpi0 libtreduce0 treduce "
[ "$names" = "$want" ] || bad "packages [$names], not [$want]"
version=$(dpkg-deb -f "${debs[0]}" Version)
for d in "${debs[@]}"; do
  [ "$(dpkg-deb -f "$d" Version)" = "$version" ] || bad "$(basename "$d"): not version $version"
done

# lintian: no error, no warning (its note that it runs as root is left out).
lintian --display-info --tag-display-limit 0 "${debs[@]}" >"$tmp/lintian.txt" \
  2>"$tmp/lintian.err" || true
echo "lintian:"; sed 's/^/  /' "$tmp/lintian.txt"
grep -v 'running with root privileges' "$tmp/lintian.err" | sed 's/^/  /' || true
if grep -qE '^[EW]: ' "$tmp/lintian.txt"; then
  bad "lintian: $(grep -cE '^E: ' "$tmp/lintian.txt") errors, $(grep -cE '^W: ' "$tmp/lintian.txt") warnings"
fi

# The packages' files, against cmake --install's.
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
(cd "$tmp/prefix" && find . ! -type d | sed 's|^\./||' |
  grep -vE '^share/doc/treduce/(LICENSE|CHANGELOG\.md)$' | sort) >"$tmp/installed.txt"
for d in "${debs[@]}"; do
  pkg=$(dpkg-deb -f "$d" Package)
  dpkg-deb -c "$d" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./usr/||' >"$tmp/files-$pkg.txt"
  for f in copyright changelog.gz; do
    grep -qx "share/doc/$pkg/$f" "$tmp/files-$pkg.txt" || bad "$pkg has no /usr/share/doc/$pkg/$f"
  done
  mkdir "$tmp/x-$pkg" && dpkg-deb -x "$d" "$tmp/x-$pkg"
  got=$(dpkg-parsechangelog -l "$tmp/x-$pkg/usr/share/doc/$pkg/changelog.gz" -S Version 2>&1) || true
  [ "$got" = "$version" ] || bad "$pkg: its changelog's version is '$got', not $version"
done
cat "$tmp"/files-*.txt | grep -vE '^share/doc/[^/]+/(copyright|changelog\.gz)$' |
  sort >"$tmp/packaged.txt"
diff "$tmp/installed.txt" "$tmp/packaged.txt" >"$tmp/diff.txt" ||
  bad "the packages' files differ from cmake --install's: $(head -20 "$tmp/diff.txt")"
[ -z "$(sort "$tmp/packaged.txt" | uniq -d)" ] || bad "files in two packages: $(sort "$tmp/packaged.txt" | uniq -d)"

# Relations.
depends() { # the Depends of package $1, one a line
  local d
  for d in "${debs[@]}"; do
    [ "$(dpkg-deb -f "$d" Package)" = "$1" ] && dpkg-deb -f "$d" Depends | tr ',' '\n' |
      sed 's/^ *//; s/ *$//'
  done
  return 0
}
for p in treduce libtreduce-figures0; do
  depends "$p" | grep -qx plplot-driver-cairo || bad "$p does not depend on plplot-driver-cairo"
done
for p in ${want/libtreduce-dev/}; do
  case $p in lib*) depends libtreduce-dev | grep -qxF "$p (= $version)" ||
    bad "libtreduce-dev does not depend on $p (= $version)" ;; esac
done
for p in libtreduce-figures0 libtreduce-steady0 libtreduce-wire-mpi0; do
  depends $p | grep -qxF "libtreduce0 (= $version)" ||
    bad "$p does not depend on libtreduce0 (= $version)"
done
if ! apt-get install --simulate -q "${debs[@]}" >"$tmp/apt.txt" 2>&1; then
  bad "apt-get could not install them: $(tail -5 "$tmp/apt.txt")"
fi

if [ "$fail" -ne 0 ]; then exit 1; fi
echo "packages: ok ($names- $version, lintian clean)"
