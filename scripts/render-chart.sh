#!/usr/bin/env bash
# Renders the chart of a short `cuckoo bench` run to PNG, to look at it as a
# reader would: scripts/render-chart.sh [OUT.png] [bench flags...]
# Needs rsvg-convert (Debian: apt-get install librsvg2-bin). Takes about
# 20 s with the default flags below.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/cuckoo-bench.png}
shift || true
command -v rsvg-convert >/dev/null || { echo "rsvg-convert is not installed (apt-get install librsvg2-bin)" >&2; exit 1; }
svg=$(mktemp --suffix .svg)
trap 'rm -f "$svg"' EXIT
if [ $# -eq 0 ]; then
	set -- -sizes 64k -goroutines 1,2,8 -duration 60ms
fi
go run ./cmd/cuckoo bench "$@" -svg "$svg" >/dev/null
rsvg-convert -o "$out" "$svg"
echo "$out"
