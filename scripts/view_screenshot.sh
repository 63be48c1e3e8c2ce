#!/usr/bin/env bash
# view_screenshot.sh - the README's screenshot of `physid view` (docs/view.png): the real toss 3 of the cube against
# the cube model's own rollout, with contacts, rendered by headless Chromium (Debian's chromium; scripts/setup.sh).
# usage: scripts/view_screenshot.sh [BUILD_DIR]   (run from the repository root; default build/)
set -euo pipefail
bin=${1:-build}/physid
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" view models/cube.xml data/cube_toss/toss_003.csv --rollout --contacts --title "physid view: toss 3" \
  --out "$tmp/view.html"
# the player at t = 0.55 s (the cube after its first bounce), paused: #t=SECONDS
chromium --headless=new --no-sandbox --disable-gpu --use-angle=swiftshader --enable-unsafe-swiftshader \
  --window-size=900,760 --virtual-time-budget=3000 --screenshot="$tmp/view.png" "file://$tmp/view.html#t=0.55" \
  > /dev/null 2>&1
cp "$tmp/view.png" docs/view.png
echo "docs/view.png: $(stat -c %s docs/view.png) bytes"
