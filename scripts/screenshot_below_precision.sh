#!/usr/bin/env bash
# screenshot_below_precision.sh - docs/screenshots/below-precision.png: the app under Xvfb
# (shared/tools/screenshot.sh) driven with xdotool: a fresh HOME, a folder holding the Fox with a
# clipforge.toml asking 0.001 cm (below float32 precision for its Run clip), "Compress all"; the
# Clips table then shows Run's own status with its floor (hovered: the whole explanation) and the
# footer's count.
#
# Usage: scripts/screenshot_below_precision.sh CLIPFORGE_BINARY FOX.glb OUT.png
# e.g.   scripts/screenshot_below_precision.sh target/release/clipforge \
#          ../shared/data/gltf/fox-via-bevy/Fox.glb docs/screenshots/below-precision.png
set -eu
if [ "${1:-}" = "--drive" ]; then
  # Inside Xvfb: start the app, type the folders, compress, keep it running for the capture.
  bin=$2 lib=$3 out=$4
  "$bin" &
  app=$!
  sleep 5
  wid=$(xdotool search --name ClipForge | head -1)
  xdotool windowsize "$wid" 1280 800
  sleep 1
  xdotool windowfocus "$wid"
  field() { xdotool mousemove "$1" "$2" click 1; xdotool key ctrl+a; xdotool type --delay 5 "$3"; xdotool key Return; }
  field 520 41 "$lib"
  field 520 65 "$out"
  sleep 1
  xdotool mousemove 53 91 click 1          # Compress all
  sleep 8
  xdotool mousemove 1190 177               # the Run row's Status: its hover
  wait "$app"
  exit 0
fi
bin=$(realpath "$1") fox=$(realpath "$2") png=$3
work=$(mktemp -d /tmp/below-precision-shot.XXXXXX)
mkdir -p "$work/lib" "$work/out" "$work/home"
cp "$fox" "$work/lib/"
printf 'error_threshold = 0.001\n' > "$work/lib/clipforge.toml"
HOME="$work/home" /work/shared/tools/screenshot.sh -s 1280x800x24 -l "$work/app.log" "$png" 20 \
  "$(realpath "$0")" --drive "$bin" "$work/lib" "$work/out"
echo "log: $work/app.log"
