#!/usr/bin/env bash
# Runs on the many-core machine, from .devbin/ as built by
# scripts/manycore/build.sh (bash .devbin/run.sh): the CAS probe, the
# concurrency tests under the race detector with GOMAXPROCS = the cores,
# three alternating runs of the baseline and current comparison tools, and
# a scaling run of the default filter against its peers up to 64
# goroutines (or four per core, whichever is more). Everything lands in one
# archive, $OUT/manycore.tgz (a device run returns only a few files),
# replaced after each step so that a run cut short still returns what it
# finished; status.txt in it has each step's exit status. Each step's time
# limit is cut to what is left of BUDGET seconds (default 540), so the
# whole run ends within it; on 16 cores it takes about 6 minutes.
ARCHIVE=manycore
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
deadline=$((SECONDS + ${BUDGET:-540}))
many=$gs,$((4 * ncpu > 64 ? 4 * ncpu : 64))
# step LIMIT NAME OUTFILE COMMAND...: runs COMMAND with its output in
# OUTFILE, for at most LIMIT seconds or what is left of the budget.
step() {
	local limit=$1 name=$2 file=$3 left=$((deadline - SECONDS))
	shift 3
	if [ "$left" -lt 10 ]; then
		echo "$name: skipped (budget spent)" | tee -a "$res/status.txt"
		return
	fi
	if [ "$limit" -gt "$left" ]; then limit=$left; fi
	timeout "$limit" "$@" > "$res/$file" 2>&1
	echo "$name: exit $?" | tee -a "$res/status.txt"
	pack
}

{ date; nproc; lscpu; free -g; } > "$res/machine.txt" 2>&1
pack
step 60 casprobe casprobe.txt "$bin/casprobe" -bytes 1140326,1729672,2207248,8388608,268435456 \
	-goroutines "$gs" -runs 3
cd "$root" # the tests read testdata/ from the repository root
step 150 "race tests" race.txt "$bin/race.test" -test.short -test.v -test.cpu "$ncpu" \
	-test.run 'Race|Concurrent|UnderRelocation|UnderChurn|Unique|Snapshot|Reset|NoFalseNegatives|Relocation'
grep -E '^(--- FAIL|FAIL|ok|PASS|panic)' "$res/race.txt"
cd "$res"
cmp=(-sizes 1M -impls cuckoo-lockfree-f8,cuckoo-lockfree-f12,xor8 -goroutines "$gs"
	-workloads fill,lookup-pos,lookup-neg -duration 300ms -reps 3 -q)
for r in 1 2 3; do
	order="then now"
	if [ "$r" = 2 ]; then order="now then"; fi # no binary always runs first
	for b in $order; do
		step 90 "compare $b run $r" "$b-$r.txt" "$bin/compare-$b" "${cmp[@]}" -json "$res/$b-$r.json"
	done
done
step 120 scaling scaling.txt "$bin/compare-now" -sizes 1M \
	-impls cuckoo-lockfree-f12,cuckoo-locked-f12,seiflotfy-mutex,seiflotfy-rwmutex,probe \
	-goroutines "$many" -workloads fill,lookup-pos,lookup-neg,mixed -duration 300ms -reps 3 -q \
	-json "$res/scaling.json"
