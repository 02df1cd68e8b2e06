#!/bin/bash
# Instructions per operation of one opcount binary over every cell of the
# "no slower" table (cachegrind, --cache-sim=no: instruction counts only).
#
#   opcount-table.sh BINARY [N]          print the table (N lookups per workload, default 1000000)
#   opcount-table.sh compare BASE NEW    print both tables' cells side by side with NEW/BASE - 1
#
# Build a binary:  (cd bench && go build -o /tmp/opcount ./cmd/opcount)
#
# Cells per configuration: fill (Insert, per key: I(-n 0)/2^20), fillbatch
# (InsertBatch, 16 keys a call), pos, neg, batch ((I(-n N) - I(-n 0))/N).
# Configurations: -bits 12 (five 12-bit), 124 (four 12-bit), 15, 8 (packed),
# each LockFree and -locked; -impl growing (GOGC=off, as opcount's doc says)
# in both modes; -impl seiflotfy, its fill only (opcount counts nothing else
# of it). Runs two valgrinds at a time (about 2.5 minutes on 2 vCPUs).
# Two runs of one binary differed by up to 0.4% in a cell (lookups; fills
# 0.06%), so read a difference below that as noise.
set -euo pipefail

if [ "${1:-}" = compare ]; then
	join -j1 <(awk 'NR>1{print $1"/"$2, $3}' "$2" | sort) <(awk 'NR>1{print $1"/"$2, $3}' "$3" | sort) |
		awk '{d=($3/$2-1)*100; flag=(d>3)?"  <-- over 3%":""; printf "%-22s %10.2f %10.2f %+7.2f%%%s\n", $1, $2, $3, d, flag}'
	exit 0
fi

bin=$(readlink -f "$1")
n=${2:-1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

configs=(
	"b12|-bits 12" "b12-locked|-bits 12 -locked"
	"b124|-bits 124" "b124-locked|-bits 124 -locked"
	"b15|-bits 15" "b15-locked|-bits 15 -locked"
	"b8|-bits 8" "b8-locked|-bits 8 -locked"
	"growing|-impl growing" "growing-locked|-impl growing -locked"
)

# jobs: name|args|run-args
jobs=("seiflotfy.fill|-impl seiflotfy -n 0")
for c in "${configs[@]}"; do
	name=${c%%|*}
	args=${c#*|}
	jobs+=("$name.fill|$args -n 0")
	jobs+=("$name.fillbatch|$args -n 0 -fill batch")
	for w in pos neg batch; do
		jobs+=("$name.$w|$args -n $n -w $w")
	done
done

run1() {
	local name=${1%%|*} args=${1#*|} env=
	case $name in growing*) env="GOGC=off" ;; esac
	env $env valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$bin" $args 2>&1 >/dev/null | awk '/I *refs:/{gsub(",","",$NF); print $NF}' >"$tmp/$name"
}
export -f run1
export bin tmp
printf '%s\n' "${jobs[@]}" | xargs -P 2 -I{} bash -c 'run1 "$@"' _ {}

echo "config cell instr/op"
for c in "${configs[@]}"; do
	name=${c%%|*}
	f0=$(cat "$tmp/$name.fill")
	awk -v f="$(cat "$tmp/$name.fill")" -v c="$name" 'BEGIN{printf "%s fill %.2f\n", c, f/1048576}'
	awk -v f="$(cat "$tmp/$name.fillbatch")" -v c="$name" 'BEGIN{printf "%s fillbatch %.2f\n", c, f/1048576}'
	for w in pos neg batch; do
		awk -v a="$(cat "$tmp/$name.$w")" -v z="$f0" -v n="$n" -v c="$name" -v w="$w" \
			'BEGIN{printf "%s %s %.2f\n", c, w, (a-z)/n}'
	done
done
awk -v f="$(cat "$tmp/seiflotfy.fill")" 'BEGIN{printf "seiflotfy fill %.2f\n", f/1048576}'
