#!/usr/bin/env bash
# mdtest-hard-write alone, on the disk, in the state IO500's earlier write
# phases leave: before each run, IOR and mdtest (built from the hpc/ior
# repository) make ior-easy's files (256 MiB a rank), mdtest-easy's
# (16,000 files a rank) and ior-hard's file (4,000 transfers a rank) on
# the disk, and sync; then either mdtest -C -Y makes mdtest-hard's 8,000
# files a rank, or fsbench io500 does in a directory made after that
# state (its other phases a transfer or two). Both sides find the same
# files and free blocks around them, made by the same program, so that a
# difference between them is in the phase alone. Alternating pairs;
# prints the medians, their ratio with its 95% interval, and the files a
# second of every run. Not run by CI.
#
#   benchmarks/scripts/hard-write-state.sh IOR_DIR [PAIRS] [DISK_DIR]
#
# NP ranks (default 4). BIND=1 binds the ranks of both sides to cores
# (mpirun --map-by core --bind-to core:overload-allowed). Each run
# begins once the files the run before deleted are out of the window in
# which ext4 without a journal will not give their inodes out again, and
# from dropped caches (as hpc-compare.sh's FRESH=1).
set -euo pipefail
ior_dir=${1:?usage: hard-write-state.sh IOR_DIR [PAIRS] [DISK_DIR]}
pairs=${2:-6}
disk=${3:-/var/tmp/fsbench-hard-state}
here=$(cd "$(dirname "$0")/../.." && pwd)
fsbench=${FSBENCH:-$here/bin/fsbench}
np=${NP:-4} bind=${BIND:-0}
case $np in '' | *[!0-9]* | 0) echo "hard-write-state.sh: NP is a count of ranks, not $np" >&2; exit 2 ;; esac
case $bind in 0 | 1) ;; *) echo "hard-write-state.sh: BIND is 0 or 1, not $bind" >&2; exit 2 ;; esac
case $pairs in '' | *[!0-9]* | 0) echo "hard-write-state.sh: PAIRS is a count of pairs, not $pairs" >&2; exit 2 ;; esac
mpirun=(mpirun --allow-run-as-root --oversubscribe -np "$np")
if [ "$bind" = 1 ]; then mpirun+=(--map-by core --bind-to core:overload-allowed); fi
window=$(($(cat /proc/sys/vm/dirty_expire_centisecs) / 100 + 6))
run=$disk/fsbench-hard-write-state # the only directory made, and removed, under DISK_DIR
out=$(mktemp /tmp/fsbench-hard-state.XXXXXX.tsv)
# shellcheck source=benchmarks/scripts/host-memory.sh
source "$here/benchmarks/scripts/host-memory.sh"
# shellcheck source=benchmarks/scripts/pairs.sh
source "$here/benchmarks/scripts/pairs.sh"
cleanup() { rm -rf "$run"; release_freed_memory; }
trap cleanup EXIT
trap 'exit 1' INT TERM # the clean-up runs on these too
hold_freed_memory
mkdir -p "$disk"

# state: IO500's write phases before mdtest-hard-write, by IOR and mdtest.
state() {
	rm -rf "$run" && sync && sleep "$window" && echo 3 >/proc/sys/vm/drop_caches
	mkdir -p "$run/easy" "$run/hard"
	"${mpirun[@]}" "$ior_dir/src/ior" -w -a POSIX -F -C -k -e -t 2m -b 256m -o "$run/easy/f" >/dev/null
	sync && "${mpirun[@]}" "$ior_dir/src/mdtest" -C -Y -F -u -N 1 -n 16000 -d "$run/mde" >/dev/null
	sync && "${mpirun[@]}" "$ior_dir/src/ior" -w -a POSIX -C -k -e -t 47008 -b 47008 -s 4000 -o "$run/hard/f" >/dev/null
	sync && warm_free_memory
}

run_fsbench() {
	state && mkdir "$run/fsbench"
	"${mpirun[@]}" "$fsbench" io500 "$run/fsbench" -q -o json --data-packet-type timestamp \
		--ior-easy-transfers 1 --ior-hard-segments 2 --mdtest-easy-files 2 --mdtest-hard-files 8000 |
		python3 -c 'import json,sys
for p in json.load(sys.stdin)["phases"]:
    if p["name"] == "mdtest-hard-write": print("%s\tfsbench\tmdtest-hard-write\t%.6f" % (sys.argv[1], p["value"]["value"]))' "$np"
}

run_mdtest() {
	state
	"${mpirun[@]}" "$ior_dir/src/mdtest" -C -Y -F -N 1 -n 8000 -w 3901 -e 3901 -d "$run/mdh" |
		awk -v np="$np" '$1=="File" && $2=="creation" {printf "%s\tmdtest\tmdtest-hard-write\t%.6f\n", np, $5/1000}'
}

alternate "$pairs" "$out" run_fsbench run_mdtest
pair_table "$out" mdtest mdtest ranks
awk -F'\t' '{r[$2] = r[$2] " " sprintf("%.1f", $4)} END {for (t in r) print "# " t ":" r[t]}' "$out" | sort
echo "# runs: $out" >&2
