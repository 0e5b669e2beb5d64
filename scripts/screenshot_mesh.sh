#!/usr/bin/env bash
# screenshot_mesh.sh - docs/screenshots/mesh*.png: the app under Xvfb (shared/tools/screenshot.sh)
# driven with xdotool: a fresh HOME, the input folder typed, "Compress all", the first row
# opened (the clip detail opens on its mesh), optionally "side by side" clicked.
#
# Usage: scripts/screenshot_mesh.sh CLIPFORGE_BINARY MODEL(.gltf/.glb/.fbx) OUT.png [WxH [X,Y]]
#   WxH: screen and window size (default 1280x800); X,Y: a click after the detail opened (e.g.
#   on "side by side", found on a first screenshot).
# e.g.   scripts/screenshot_mesh.sh target/release/clipforge \
#          ../shared/data/gltf/khronos-via-ozz/cesium_man.gltf docs/screenshots/mesh.png
set -eu
if [ "${1:-}" = "--drive" ]; then
  # Inside Xvfb: start the app, click through, keep it running for the capture.
  bin=$2 lib=$3 out=$4 size=$5 click=$6
  "$bin" &
  app=$!
  sleep 5
  wid=$(xdotool search --name ClipForge | head -1)
  xdotool windowsize "$wid" "${size%x*}" "${size#*x}"
  sleep 1
  xdotool windowfocus "$wid"
  field() { xdotool mousemove "$1" "$2" click 1; xdotool key ctrl+a; xdotool type --delay 5 "$3"; xdotool key Return; }
  field 520 41 "$lib"
  field 520 65 "$out"
  sleep 1
  xdotool mousemove 53 91 click 1          # Compress all
  sleep 8
  xdotool mousemove 300 177 click 1        # the first row: its detail
  sleep 6
  if [ -n "$click" ]; then
    xdotool mousemove "${click%,*}" "${click#*,}" click 1
    sleep 2
  fi
  xdotool mousemove 5 795
  wait "$app"
  exit 0
fi
bin=$(realpath "$1") model=$(realpath "$2") png=$3 size=${4:-1280x800} click=${5:-}
work=$(mktemp -d /tmp/mesh-shot.XXXXXX)
mkdir -p "$work/lib" "$work/out" "$work/home"
cp "$model" "$work/lib/"
for f in "$(dirname "$model")"/*.bin; do [ -e "$f" ] && cp "$f" "$work/lib/"; done
HOME="$work/home" /work/shared/tools/screenshot.sh -s "${size}x24" -l "$work/app.log" "$png" 28 \
  "$(realpath "$0")" --drive "$bin" "$work/lib" "$work/out" "$size" "$click"
echo "log: $work/app.log"
