#!/usr/bin/env bash
# Install what physid needs to build and test on Debian 12 (idempotent; skips what is present).
# usage: setup.sh [--bench]   --bench adds DART 6.12, the second peer of the contact benchmark
set -euo pipefail
pkgs=(build-essential cmake pkg-config libxml2-dev libcjson-dev zlib1g-dev libqhull-dev
      libmujoco-dev libmujoco-samples dart-doc valgrind liblbfgsb-dev liblapacke-dev
      libblas-dev                   # <cblas.h>, the reference BLAS: the networks (src/math/mlp.c); not OpenBLAS (README)
      clang-14 libclang-rt-14-dev   # clang-14 and its libFuzzer/sanitizer runtimes: scripts/fuzz.sh
      coinor-libipopt-dev           # Ipopt 3.11: multiple shooting (src/control/ms.c)
      libassimp-dev                 # Collada (.dae) meshes (src/model/mesh_assimp.c; optional: -DPHYS_ASSIMP=OFF)
      libopenmpi-dev openmpi-bin    # Open MPI: mpirun -np N physid identify (tools/mpi.c)
      libjs-three chromium          # physid view: three.js inlined in its pages; headless Chromium tests them
      python3-numpy python3-pytest python3-torch python3-pip python3-setuptools)   # the Python binding (python/):
                                    # Debian's /usr/bin/python3 has them, not a pyenv python3 earlier on PATH
if [ "${1:-}" = "--bench" ]; then
  pkgs+=(g++ libdart-dev libdart-collision-bullet-dev libdart-utils-urdf-dev)   # bench/bench_dart.cpp only
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
