#!/usr/bin/env bash
# Rebuilds echarts.min.js here: Apache ECharts 6.1.0 (npm "echarts", Apache-2.0)
# bundled with only what snr's report pages use (entry.js: line, bar, custom and
# heatmap series; grid, tooltip, legend, dataZoom and visualMap; the canvas and
# SVG renderers) by esbuild 0.28.2, minified, as the global `echarts` of the
# full distribution (689 KB instead of its 1.1 MB: the browser compiles and runs
# less before the report draws). Needs npm and the npm registry; the build of
# snr itself never runs this (the bundle is vendored).
# usage: third_party/echarts/build.sh
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cd "$W"
npm init -y >/dev/null
npm install --no-audit --no-fund --silent echarts@6.1.0 esbuild@0.28.2
cp "$HERE/entry.js" .
./node_modules/.bin/esbuild entry.js --bundle --minify --format=iife --target=es2017 --legal-comments=eof \
  --outfile=bundle.js --log-level=warning
{ sed -n '1,/^\*\/$/p' node_modules/echarts/dist/echarts.js; cat bundle.js; } >"$HERE/echarts.min.js"
! grep -q '</script' "$HERE/echarts.min.js" || { echo "the bundle holds </script: it cannot be inlined" >&2; exit 1; }
echo "wrote $HERE/echarts.min.js ($(stat -c %s "$HERE/echarts.min.js") bytes)"
