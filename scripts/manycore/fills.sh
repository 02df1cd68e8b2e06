#!/usr/bin/env bash
# Runs on the many-core machine, from .devbin/ as built by
# scripts/manycore/build.sh (bash .devbin/fills.sh): fills only, of 1M
# keys into the packed 8-bit class and the five-slot default (Insert and
# InsertBatch) beside xor8's build, from 1 goroutine up to the cores, by
# three builds in turn: the baseline (compare-then), the current tree
# (compare-now) and the current tree with its shard sets sized as the
# baseline sized them (compare-wide), or the builds named in BUILDS
# (compare-NAME each), with the impls IMPLS names. ROUNDS rounds (default
# 3), each build first in one of them. Everything lands in $OUT/fills.tgz, replaced
# after each step; status.txt has each step's exit. BUDGET seconds
# (default 360) bound the whole run.
ARCHIVE=fills
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
deadline=$((SECONDS + ${BUDGET:-360}))
{ date; nproc; lscpu; free -g; } > "$res/machine.txt" 2>&1
pack
cd "$res"
cmp=(-sizes 1M -impls "${IMPLS:-cuckoo-lockfree-f8,cuckoo-lockfree-f12,xor8}" -goroutines "$gs"
	-workloads fill -duration 300ms -reps 3 -q)
read -ra builds <<< "${BUILDS:-then now wide}"
nb=${#builds[@]}
for ((r = 0; r < ${ROUNDS:-3}; r++)); do
	for ((i = 0; i < nb; i++)); do
		b=${builds[(r + i) % nb]}
		left=$((deadline - SECONDS))
		if [ "$left" -lt 10 ]; then
			echo "$b round $r: skipped (budget spent)" >> status.txt
			continue
		fi
		limit=$((left < 90 ? left : 90))
		timeout "$limit" "$bin/compare-$b" "${cmp[@]}" -json "$b-$r.json" > "$b-$r.txt" 2>&1
		echo "$b round $r: exit $? after ${SECONDS}s" >> status.txt
		pack
	done
done
cat status.txt
