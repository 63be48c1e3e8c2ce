#!/usr/bin/env bash
# Install, build, and run physid's main job on the bundled default model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 >/dev/null
model=${1:-models/arm7.xml}
./build/physid info "$model"
./build/physid simulate "$model" --steps 1000 --ctrl random --seed 1 --out build/trajectory.csv
echo "trajectory written to build/trajectory.csv ($(($(wc -l < build/trajectory.csv) - 1)) states)"
