#!/usr/bin/env bash
# Builds what a many-core run needs into .devbin/ (ignored by git), on the
# development machine, so that the run itself spends no time compiling:
#
#	scripts/manycore/build.sh [BASELINE_COMMIT]
#
# .devbin/compare-now   the comparison tool at the checked-out tree
# .devbin/compare-then  the same at BASELINE_COMMIT (default de69bda, the
#                       one-word 8-bit layout before the packed one, and
#                       before the bounds on shards and stripes), with the
#                       checked-out tree's harness loop
# .devbin/compare-wide  the comparison tool at the checked-out tree with the
#                       bound of one shard per wordsPerShard table words
#                       lifted (shard.go; two shards per P, at most 64, as
#                       at the baseline), for fills.sh; it breaks the
#                       classes' bits per key on many cores and is never
#                       committed
# .devbin/casprobe      random CASes into arrays, the ceiling of a fill
# .devbin/race.test     the library's tests under the race detector
# .devbin/common.sh     what the three runners share
# .devbin/run.sh        the runner (scripts/manycore/run.sh)
# .devbin/fills.sh      fills only, then / now / wide alternately
#                       (scripts/manycore/fills.sh)
# .devbin/speed.sh      fills and lookups, then / now alternately, 1M and
#                       32M keys (scripts/manycore/speed.sh)
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
wide=$(mktemp -d)
trap 'git worktree remove --force "$wt" >/dev/null 2>&1; rm -rf "$wt";
	git worktree remove --force "$wide" >/dev/null 2>&1; rm -rf "$wide"' EXIT
git worktree add -q --detach "$wt" "$base"
# The baseline measures with today's harness loop (internal/benchkit/run.go,
# whose workers keep their key buffers on cache lines of their own), so
# that the two builds differ only in the filter.
if [ -f "$wt/internal/benchkit/run.go" ]; then cp internal/benchkit/run.go "$wt/internal/benchkit/run.go"; fi
(cd "$wt/bench" && go build -ldflags='-s -w' -o "$out/compare-then" ./cmd/compare)
git worktree add -q --detach "$wide" HEAD
git diff HEAD -- . | (cd "$wide" && git apply --allow-empty) # uncommitted changes too
sed -i 's/^\(\s*wordsPerShard\s*=\s*\)16384$/\11/' "$wide/shard.go"
grep -Eq '^\s*wordsPerShard\s*=\s*1$' "$wide/shard.go" || { echo "build.sh: shard.go's bound not found" >&2; exit 1; }
(cd "$wide/bench" && go build -ldflags='-s -w' -o "$out/compare-wide" ./cmd/compare)
(cd bench && go build -ldflags='-s -w' -o "$out/compare-now" ./cmd/compare &&
	go build -ldflags='-s -w' -o "$out/casprobe" ./cmd/casprobe)
go test -c -race -o "$out/race.test" .
cp scripts/manycore/common.sh scripts/manycore/run.sh scripts/manycore/fills.sh scripts/manycore/speed.sh "$out/"
du -sh "$out"
