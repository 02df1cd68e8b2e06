#!/usr/bin/env bash
# Runs on the many-core machine, from .devbin/ as built by
# scripts/manycore/build.sh (bash .devbin/speed.sh): the speed check of
# the classes against the baseline, then (compare-then) and now
# (compare-now) in alternating rounds, each build first in half of them:
# fills and lookups of 1M keys from one goroutine up to the cores, then
# lookups of 32M keys with one goroutine and with as many as cores. The
# 8-bit class (packed now), the five-slot default and xor8, the yardstick,
# run in every round. Everything lands in $OUT/speed.tgz, replaced after
# each step; status.txt has each step's exit. ROUNDS (default 4) rounds at
# 1M, ROUNDS32 (default 2) at 32M, BUDGET seconds (default 480) for all;
# what the budget leaves at the end goes to the concurrency tests under
# the race detector.
ARCHIVE=speed
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
deadline=$((SECONDS + ${BUDGET:-480}))
# step LIMIT NAME COMMAND...: runs COMMAND for at most LIMIT seconds or
# what is left of the budget, and records its exit.
step() {
	local limit=$1 name=$2 left=$((deadline - SECONDS))
	shift 2
	if [ "$left" -lt 10 ]; then
		echo "$name: skipped (budget spent)" >> "$res/status.txt"
		return
	fi
	if [ "$limit" -gt "$left" ]; then limit=$left; fi
	timeout "$limit" "$@"
	echo "$name: exit $? at ${SECONDS}s" >> "$res/status.txt"
	pack
}
{ date; nproc; lscpu; free -g; } > "$res/machine.txt" 2>&1
pack
cd "$res"
impls=cuckoo-lockfree-f8,cuckoo-lockfree-f12,xor8
for ((r = 0; r < ${ROUNDS:-4}; r++)); do
	order="then now"
	if ((r % 2)); then order="now then"; fi
	for b in $order; do
		step 90 "1M $b round $r" "$bin/compare-$b" -sizes 1M -impls "$impls" -goroutines "$gs" \
			-workloads fill,lookup-pos,lookup-neg -duration 300ms -reps 3 -q \
			-json "1M-$b-$r.json" > "1M-$b-$r.txt" 2>&1
	done
done
for ((r = 0; r < ${ROUNDS32:-2}; r++)); do
	order="then now"
	if ((r % 2)); then order="now then"; fi
	for b in $order; do
		step 90 "32M $b round $r" "$bin/compare-$b" -sizes 32M -impls "$impls" -goroutines "1,$ncpu" \
			-workloads lookup-pos,lookup-neg -duration 300ms -reps 3 -q \
			-json "32M-$b-$r.json" > "32M-$b-$r.txt" 2>&1
	done
done
cd "$root" # the tests read testdata/ from the repository root
step 150 "race tests" "$bin/race.test" -test.short -test.v -test.cpu "$ncpu" \
	-test.run 'Race|Concurrent|UnderRelocation|UnderChurn|Unique|Snapshot|Reset|NoFalseNegatives|Relocation' \
	> "$res/race.txt" 2>&1
grep -E '^(--- FAIL|FAIL|ok|PASS|panic)' "$res/race.txt"
cat "$res/status.txt"
