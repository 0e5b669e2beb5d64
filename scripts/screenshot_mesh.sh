#!/usr/bin/env bash
# screenshot_mesh.sh - docs/screenshots/mesh*.png: the app under Xvfb (shared/tools/screenshot.sh)
# driven with xdotool: a fresh HOME, the input folder typed, "Compress all", the first row
# opened (the clip detail opens on its mesh), optionally "side by side" clicked.
#
# Usage: scripts/screenshot_mesh.sh CLIPFORGE_BINARY MODEL(.gltf/.glb) OUT.png [side]
# e.g.   scripts/screenshot_mesh.sh target/release/clipforge \
#          ../shared/data/gltf/khronos-via-ozz/cesium_man.gltf docs/screenshots/mesh.png
set -eu
if [ "${1:-}" = "--drive" ]; then
  # Inside Xvfb: start the app, click through, keep it running for the capture.
  bin=$2 lib=$3 out=$4 side=$5
  "$bin" &
  app=$!
  sleep 5
  wid=$(xdotool search --name ClipForge | head -1)
  xdotool windowfocus "$wid"
  field() { xdotool mousemove "$1" "$2" click 1; xdotool key ctrl+a; xdotool type --delay 5 "$3"; xdotool key Return; }
  field 520 41 "$lib"
  field 520 65 "$out"
  sleep 1
  xdotool mousemove 53 91 click 1          # Compress all
  sleep 8
  xdotool mousemove 300 177 click 1        # the first row: its detail
  sleep 6
  if [ "$side" = side ]; then
    # "side by side" sits right of "overlay" above the mesh; found by the view's layout.
    xdotool mousemove 680 510 click 1
  fi
  xdotool mousemove 5 795
  wait "$app"
  exit 0
fi
bin=$(realpath "$1") model=$(realpath "$2") png=$3 side=${4:-}
work=$(mktemp -d /tmp/mesh-shot.XXXXXX)
mkdir -p "$work/lib" "$work/out" "$work/home"
cp "$model" "$work/lib/"
for f in "$(dirname "$model")"/*.bin; do [ -e "$f" ] && cp "$f" "$work/lib/"; done
HOME="$work/home" /work/shared/tools/screenshot.sh -l "$work/app.log" "$png" 26 \
  "$(realpath "$0")" --drive "$bin" "$work/lib" "$work/out" "$side"
echo "log: $work/app.log"
