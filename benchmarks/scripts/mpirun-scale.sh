#!/usr/bin/env bash
# mpirun-scale.sh: RUNS runs of `mpirun --oversubscribe -np NP fsbench
# bench` on this machine (Open MPI; internal/testenv/install.sh installs
# it), a short stat phase on a directory under $OUT. Per run: exit code,
# wall, the ranks in the merged result, the largest RSS of one process,
# the least memory available during the run, and the load average.
#
#   NP=256 RUNS=3 benchmarks/scripts/mpirun-scale.sh [FSBENCH]
set -euo pipefail
BIN=$(command -v "${1:-fsbench}")
NP=${NP:-256} RUNS=${RUNS:-3} OUT=${OUT:-/tmp/mpirun-scale}
mkdir -p "$OUT"
ok=0
for ((r = 1; r <= RUNS; r++)); do
	root=$(mktemp -d "$OUT/root.XXXX")
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	t0=$(date +%s.%N)
	/usr/bin/time -f '%M' -o "$OUT/time-$r" timeout 900 mpirun --allow-run-as-root --oversubscribe -np "$NP" "$BIN" bench "$root" \
		--rw stat --files 4 --file-size 4K -p 1 --duration 2s --drop-caches never -o json >"$OUT/result-$r.json" 2>"$OUT/stderr-$r" &
	pid=$!
	least=$(awk '/MemAvailable/ { print int($2 / 1024) }' /proc/meminfo)
	while kill -0 "$pid" 2>/dev/null; do
		a=$(awk '/MemAvailable/ { print int($2 / 1024) }' /proc/meminfo)
		((a < least)) && least=$a
		sleep 1
	done
	code=0
	wait "$pid" || code=$?
	wall=$(echo "$(date +%s.%N) - $t0" | bc)
	ranks=$(jq '.phases[0].hosts | length' "$OUT/result-$r.json" 2>/dev/null || echo 0)
	printf 'run %d exit %d wall %.1f s ranks %s max RSS of a process %d MiB least available %d MiB load %s\n' \
		"$r" "$code" "$wall" "$ranks" $(($(tail -1 "$OUT/time-$r") / 1024)) "$least" "$load"
	[ "$code" = 0 ] && [ "$ranks" = "$NP" ] && ok=$((ok + 1))
	left=$(ls -A "$root")
	[ -z "$left" ] || echo "run $r left behind: $left"
	rmdir "$root"
done
echo "complete: $ok of $RUNS (np $NP)"
