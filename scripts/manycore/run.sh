#!/usr/bin/env bash
# Runs on the many-core machine from the repository root, with .devbin/
# built by scripts/manycore/build.sh: the CAS probe, three alternating runs
# of the baseline and current comparison tools, a scaling run of the
# default filter against its peers from 1 to 64 goroutines, and the
# concurrency tests under the race detector with GOMAXPROCS = the cores.
# Everything lands in one archive, $OUT/manycore.tgz (a device run returns
# at most a few files), written again after each step so that a run cut
# short still returns what it finished. About 6 minutes on 16 cores.
set -uo pipefail
bin=$PWD/.devbin
res=$(mktemp -d)
out=${OUT:-/tmp}
ncpu=$(nproc)
gs=1 # 1, 2, 4, ... below the cores, then the cores
for g in 2 4 8 16 32 64 128; do
	if [ "$g" -lt "$ncpu" ]; then gs=$gs,$g; fi
done
if [ "$ncpu" -gt 1 ]; then gs=$gs,$ncpu; fi
many=$gs
if [ "$ncpu" -lt 64 ]; then many=$gs,64; fi
pack() { tar czf "$out/manycore.tgz" -C "$res" .; }
cd "$res"
{ date; nproc; lscpu; free -g; } > machine.txt 2>&1
pack
timeout 60 "$bin/casprobe" -bytes 1140326,2207248,8388608,268435456 -goroutines "$gs" -runs 3 > casprobe.txt 2>&1
pack
cmp=(-sizes 1M -impls cuckoo-lockfree-f8,cuckoo-lockfree-f12,xor8 -goroutines "$gs"
	-workloads fill,lookup-pos,lookup-neg -duration 300ms -reps 3 -q)
for r in 1 2 3; do
	for b in then now; do
		timeout 90 "$bin/compare-$b" "${cmp[@]}" -json "$b-$r.json" > "$b-$r.txt" 2>&1
		echo "$b run $r: exit $?"
	done
	pack
done
timeout 120 "$bin/compare-now" -sizes 1M \
	-impls cuckoo-lockfree-f12,cuckoo-locked-f12,seiflotfy-mutex,seiflotfy-rwmutex,probe \
	-goroutines "$many" -workloads fill,lookup-pos,lookup-neg,mixed -duration 300ms -reps 3 -q \
	-json scaling.json > scaling.txt 2>&1
echo "scaling: exit $?"
pack
(cd - >/dev/null && timeout 150 "$bin/race.test" -test.short -test.v -test.cpu "$ncpu" -test.timeout 145s \
	-test.run 'Race|Concurrent|UnderRelocation|UnderChurn|Unique|Snapshot|Reset|NoFalseNegatives|Relocation') \
	> race.txt 2>&1
echo "race tests: exit $?"
grep -E '^(--- FAIL|FAIL|ok|PASS|panic)' race.txt
pack
