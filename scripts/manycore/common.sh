# Sourced by run.sh, fills.sh and speed.sh from .devbin/ (build.sh copies
# it there): the folders, the goroutine counts and the archive packing the
# three share. Before sourcing, set ARCHIVE to the archive's name (without
# .tgz). Defines bin (the .devbin folder), root (the repository root), res
# (a temporary folder for the results, removed on exit), out ($OUT or
# /tmp), ncpu, gs (1, 2, 4, ... below the cores, then the cores) and
# pack (writes res into $out/$ARCHIVE.tgz, replacing it whole).
set -uo pipefail
bin=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$bin")
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT
out=${OUT:-/tmp}
ncpu=$(nproc)
gs=1
for g in 2 4 8 16 32 64 128 256; do
	if [ "$g" -lt "$ncpu" ]; then gs=$gs,$g; fi
done
if [ "$ncpu" -gt 1 ]; then gs=$gs,$ncpu; fi

pack() {
	tar czf "$out/.$ARCHIVE.tgz.part" -C "$res" . && mv -f "$out/.$ARCHIVE.tgz.part" "$out/$ARCHIVE.tgz"
}
