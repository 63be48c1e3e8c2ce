#!/usr/bin/env bash
# Install, build, and run physid's main job: identify the friction and restitution of the ContactNets cube
# from 12 of its real tosses (data/cube_toss, BSD-3, see its README) with models/cube.xml, print the values
# with their standard errors and 95% intervals, and write build/result.json, build/report.html and the
# identified model build/cube_identified.xml.
# usage: run.sh                        the cube job
#        run.sh MODEL DATA... --param KIND:NAME ...   any identification (arguments of physid identify)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 >/dev/null
if [ $# -gt 0 ]; then
  exec ./build/physid identify "$@"
fi
./build/physid identify models/cube.xml data/cube_toss \
  --param friction:cube:max=2 --param restitution:cube \
  --out build/result.json --report build/report.html --write-model build/cube_identified.xml
echo "written: build/result.json, build/report.html (open it in a browser), build/cube_identified.xml"
