#!/usr/bin/env bash
# Builds what a many-core run needs into .devbin/ (ignored by git), on the
# development machine, so that the run itself spends no time compiling:
#
#	scripts/manycore/build.sh [BASELINE_COMMIT]
#
# .devbin/compare-now   the comparison tool at the checked-out tree
# .devbin/compare-then  the same at BASELINE_COMMIT (default de69bda, the
#                       one-word 8-bit layout before the packed one, and
#                       before the bounds on shards and stripes)
# .devbin/casprobe      random CASes into arrays, the ceiling of a fill
# .devbin/race.test     the library's tests under the race detector
# .devbin/run.sh        the runner (scripts/manycore/run.sh)
#
# Then carry .devbin to the many-core machine and run `bash .devbin/run.sh`
# there; BENCHMARKS.md, "Sixteen cores", has the
# figures of the last such run.
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${1:-de69bda}
out=$PWD/.devbin
mkdir -p "$out"
wt=$(mktemp -d)
trap 'git worktree remove --force "$wt" >/dev/null 2>&1; rm -rf "$wt"' EXIT
git worktree add -q --detach "$wt" "$base"
(cd "$wt/bench" && go build -ldflags='-s -w' -o "$out/compare-then" ./cmd/compare)
(cd bench && go build -ldflags='-s -w' -o "$out/compare-now" ./cmd/compare &&
	go build -ldflags='-s -w' -o "$out/casprobe" ./cmd/casprobe)
go test -c -race -o "$out/race.test" .
cp scripts/manycore/run.sh "$out/run.sh"
du -sh "$out"
