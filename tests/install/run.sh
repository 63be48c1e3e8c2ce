#!/usr/bin/env bash
# tests/install/run.sh BUILD SOURCE - issue 18 item 1: install physid from BUILD into a scratch prefix and use it
# from outside, as another project would: consumer.c built through pkg-config (shared, and the static archive)
# and through find_package(physid) (physid::physid, physid::physid_static); all four print the same line, which
# includes one call of each public header of include/physid/ (an identification of simulated data too). Also:
# libphysid.so's SONAME carries the ABI version, it exports phys_* symbols only, and the installed
# `physid --version` is the package's version, and the Python package (python/, not installed) finds the installed
# library beside the installed physid on PATH; and `pip install ./python` into a venv works offline (issue 18
# item 2). Exits 1 with a message on the first failure.
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
TMP=$(mktemp -d /tmp/physid_install_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "install test: $*" >&2; exit 1; }
P=$TMP/prefix
cmake --install "$BUILD" --prefix "$P" > "$TMP/install.log" || { cat "$TMP/install.log" >&2; fail "cmake --install failed"; }
LIB=$(find "$P" -name 'libphysid.so' | head -1)
[ -n "$LIB" ] || fail "no libphysid.so under $P"
LIBDIR=$(dirname "$LIB")
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
VERSION=$(pkg-config --modversion physid) || fail "pkg-config does not find physid.pc in $LIBDIR/pkgconfig"
MAJMIN=${VERSION%.*}
soname=$(objdump -p "$LIB" | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = "libphysid.so.$MAJMIN" ] || fail "SONAME '$soname', expected libphysid.so.$MAJMIN"
others=$(nm -D --defined-only "$LIB" | awk '{ print $3 }' | grep -v '^phys_' || true)
[ -z "$others" ] || fail "libphysid.so exports symbols other than phys_*: $(echo "$others" | head -5 | tr '\n' ' ')"
[ "$("$P/bin/physid" --version)" = "physid $VERSION" ] || fail "installed physid --version: $("$P/bin/physid" --version)"
for f in include/physid.h include/physid/derivatives.h include/physid/params.h include/physid/identify.h \
         include/physid/control.h include/physid/fields.h share/doc/physid/LICENSE share/doc/physid/CHANGELOG.md; do
  [ -f "$P/$f" ] || fail "$f not installed"
done
MODEL=$SRC/models/arm7.xml
# the data the consumers identify from: 100 steps of the arm under random controls (damping 0.5 in the model)
"$P/bin/physid" simulate "$MODEL" --steps 100 --ctrl random --seed 3 --out "$TMP/arm7.csv" --quiet ||
  fail "installed physid simulate failed"
CC=${CC:-cc}
# pkg-config, shared (run-time path to the scratch prefix) and the static archive
# shellcheck disable=SC2046
"$CC" "$SRC/tests/install/consumer.c" -o "$TMP/pc_shared" $(pkg-config --cflags --libs physid) -Wl,-rpath,"$LIBDIR" ||
  fail "pkg-config shared build failed"
# shellcheck disable=SC2046
"$CC" "$SRC/tests/install/consumer.c" -o "$TMP/pc_static" $(pkg-config --cflags physid) -L"$LIBDIR" \
  -Wl,-Bstatic -lphysid -Wl,-Bdynamic $(pkg-config --static --libs-only-l physid | sed 's/-lphysid //') ||
  fail "pkg-config static build failed"
# find_package(physid)
for t in physid physid_static; do
  cmake -S "$SRC/tests/install" -B "$TMP/cm_$t" -DCMAKE_PREFIX_PATH="$P" -DPHYS_LINK="physid::$t" \
    -DCMAKE_BUILD_TYPE=Release > "$TMP/cm_$t.log" 2>&1 || { cat "$TMP/cm_$t.log" >&2; fail "find_package(physid) failed ($t)"; }
  cmake --build "$TMP/cm_$t" > "$TMP/cm_${t}_build.log" 2>&1 || { cat "$TMP/cm_${t}_build.log" >&2; fail "CMake build failed ($t)"; }
done
# (ldd's output into a variable first: `ldd | grep -q` under pipefail fails when grep's early exit gives ldd a
# SIGPIPE, which made this test fail now and then)
loads() { local deps; deps=$(ldd "$1"); case "$deps" in *"libphysid.so.$MAJMIN => $LIBDIR/"*) return 0 ;; esac; return 1; }
links_physid() { local deps; deps=$(ldd "$1"); case "$deps" in *libphysid*) return 0 ;; esac; return 1; }
loads "$TMP/pc_shared" || fail "pc_shared does not load $LIBDIR/libphysid.so.$MAJMIN: $(ldd "$TMP/pc_shared" | grep physid)"
! links_physid "$TMP/pc_static" || fail "pc_static loads libphysid.so"
loads "$TMP/cm_physid/consumer" || fail "the CMake shared consumer does not load $LIBDIR/libphysid.so.$MAJMIN"
! links_physid "$TMP/cm_physid_static/consumer" || fail "the CMake static consumer loads libphysid.so"
want=$("$TMP/pc_shared" "$MODEL" "$TMP/arm7.csv") || fail "pc_shared failed"
case "$want" in "physid $VERSION: nq 7, t 0.200, qpos[0] "*", identified 0.500000 ("*) ;;
  *) fail "pc_shared printed '$want'" ;; esac
for b in pc_static cm_physid/consumer cm_physid_static/consumer; do
  got=$("$TMP/$b" "$MODEL" "$TMP/arm7.csv") || fail "$b failed"
  [ "$got" = "$want" ] || fail "$b printed '$got', pc_shared '$want'"
done
# the Python package finds the installed library beside the installed physid on PATH (docs/python.md)
PY=${PHYS_PYTHON:-/usr/bin/python3}
pyout=$(cd "$TMP" && PATH="$P/bin:$PATH" PYTHONPATH="$SRC/python" PYTHONDONTWRITEBYTECODE=1 "$PY" -c \
  'import physid, physid._lib as l; print(physid.version(), l.library_path())') || fail "python: import physid failed"
[ "$pyout" = "$VERSION $LIBDIR/libphysid.so.$MAJMIN" ] || fail "python found '$pyout', expected $VERSION $LIBDIR/libphysid.so.$MAJMIN"
# `pip install ./python` works offline (issue 18 item 2; docs/python.md, Install): a venv over Debian's packages,
# the package built by Debian's setuptools from a copy of python/ (pip writes build files beside the sources)
if "$PY" -m venv --system-site-packages "$TMP/venv" > /dev/null 2>&1; then
  cp -r "$SRC/python" "$TMP/pysrc"
  rm -rf "$TMP/pysrc/build" "$TMP/pysrc"/*.egg-info
  "$TMP/venv/bin/pip" install -q --no-build-isolation --no-index "$TMP/pysrc" > "$TMP/pip.log" 2>&1 ||
    { cat "$TMP/pip.log" >&2; fail "pip install ./python failed offline"; }
  pipout=$(cd "$TMP" && PATH="$P/bin:$PATH" PYTHONDONTWRITEBYTECODE=1 "$TMP/venv/bin/python" -c \
    'import physid, physid.torch; print(physid.version(), physid.__file__)') || fail "the pip-installed physid failed"
  case "$pipout" in "$VERSION $TMP/venv/"*) ;; *) fail "the pip-installed physid printed '$pipout'" ;; esac
else
  echo "install test: no venv module for $PY: pip install ./python not tried" >&2
fi
echo "install test: $want (pkg-config and find_package, shared and static; SONAME $soname; $(nm -D --defined-only "$LIB" | wc -l) phys_* symbols)"
