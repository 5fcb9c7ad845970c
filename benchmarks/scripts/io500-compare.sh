#!/usr/bin/env bash
# Compares fsbench io500 with IO500's own program (github.com/IO500/io500,
# which runs IOR, mdtest and pfind as libraries in one MPI job) on the same
# amounts, both started by one mpirun, in alternating pairs (fsbench first
# in odd pairs), and prints the median of each phase a side, their ratio
# with its 95% interval and in how many pairs fsbench's run was the
# faster (pairs.sh). Not run by CI.
#
#   benchmarks/scripts/io500-compare.sh IO500_DIR [PAIRS] [DIR]
#
# IO500_DIR holds IO500's built io500 program (benchmarks/records/hpc-io500.md says how to
# build it without a network). Both sides run the twelve phases of the
# classic list back to back in one job, write phases ending on the storage
# (IOR -e, mdtest -Y; fsbench's fsync and syncfs) and reads checked (IOR -R,
# mdtest -X; fsbench --verify); IO500's newer phases (find-easy, find-hard,
# mdworkbench, ior-rnd4K) are turned off. NP (default "2 4") ranks,
# EASY_MIB, HARD_SEGS, EASY_FILES and HARD_FILES a rank as in
# hpc-compare.sh; DROP=1 drops the caches before each phase on both sides.
# DATA=timestamp or DATA=random has both sides write that dataPacketType
# (fsbench io500 --data-packet-type); unset, each writes its own default:
# fsbench content no transfer repeats, IO500 one buffer again and again.
set -euo pipefail
io500_dir=${1:?usage: io500-compare.sh IO500_DIR [PAIRS] [DIR]}
pairs=${2:-6}
dir=${3:-/var/tmp/fsbench-io500}
here=$(cd "$(dirname "$0")/../.." && pwd)
fsbench=${FSBENCH:-$here/bin/fsbench}
io500=$io500_dir/io500
[ -x "$io500" ] || { echo "io500-compare.sh: no io500 program in $io500_dir" >&2; exit 2; }
easy_mib=${EASY_MIB:-32} hard_segs=${HARD_SEGS:-1000} easy_files=${EASY_FILES:-2000} hard_files=${HARD_FILES:-1000}
nps=${NP:-2 4} drop=${DROP:-0} data=${DATA:-}
case $drop in 0 | 1) ;; *) echo "io500-compare.sh: DROP is 0 or 1, not $drop" >&2; exit 2 ;; esac
case $data in '' | random | timestamp) ;; *) echo "io500-compare.sh: DATA is random or timestamp, not $data" >&2; exit 2 ;; esac
mpirun=(mpirun --allow-run-as-root --oversubscribe)
work=$(mktemp -d /tmp/fsbench-io500.XXXXXX)
out=$work/figures.tsv
mkdir -p "$dir"
# shellcheck source=benchmarks/scripts/host-memory.sh
source "$here/benchmarks/scripts/host-memory.sh"
# shellcheck source=benchmarks/scripts/pairs.sh
source "$here/benchmarks/scripts/pairs.sh"
run=$dir/fsbench-compare-run # the only directory made, and removed, under DIR
cleanup() { rm -rf "$run"; release_freed_memory; }
trap cleanup EXIT
trap 'exit 1' INT TERM # the clean-up runs on these too
hold_freed_memory

drop_flag=never io500_drop=FALSE
if [ "$drop" = 1 ]; then drop_flag=always io500_drop=TRUE; fi
printf '#!/bin/sh\nsync\necho 3 > /proc/sys/vm/drop_caches\n' >"$work/drop.sh"
chmod +x "$work/drop.sh"
off() { printf '[%s]\nrun = FALSE\n' "$@"; }
{
	printf '[global]\ndatadir = %s\ntimestamp-datadir = FALSE\nresultdir = %s\ntimestamp-resultdir = FALSE\n' "$run" "$work/results"
	printf 'drop-caches = %s\ndrop-caches-cmd = %s\n' "$io500_drop" "$work/drop.sh"
	if [ -n "$data" ]; then printf 'dataPacketType = %s\n' "$data"; fi
	printf '[debug]\nstonewall-time = 300\n'
	printf '[ior-easy]\ntransferSize = 2m\nblockSize = %sm\n' "$easy_mib"
	printf '[mdtest-easy]\nn = %s\n[ior-hard]\nsegmentCount = %s\n[mdtest-hard]\nn = %s\n' "$easy_files" "$hard_segs" "$hard_files"
	off mdworkbench mdworkbench-create find-easy find-hard mdworkbench-bench mdworkbench-delete ior-rnd4K-easy-read
} >"$work/config.ini"

# fresh: an empty run directory, and the file system's journal committed
# with the removal in it, so that what a run before deleted (and its
# discards, on a file system mounted with discard) is not paid for by the
# next run's first sync, whichever side it is.
fresh() { rm -rf "$run" "$@" && sync -f "$dir" && mkdir -p "$run" && warm_free_memory; }

# run_fsbench NP: one fsbench io500 run, one line a phase.
run_fsbench() {
	fresh
	"${mpirun[@]}" -np "$1" "$fsbench" io500 "$run" -q -o json --verify --stonewall 300s --drop-caches $drop_flag --data-packet-type "${data:-random}" \
		--ior-easy-transfers $((easy_mib / 2)) --ior-hard-segments "$hard_segs" --mdtest-easy-files "$easy_files" --mdtest-hard-files "$hard_files" |
		python3 -c 'import json,sys
r=json.load(sys.stdin)
for p in r["phases"]: print("%s\tfsbench\t%s\t%.6f" % (sys.argv[1], p["name"], p["value"]["value"]))' "$1"
}

# run_io500 NP: one run of IO500's program, its [RESULT] lines.
run_io500() {
	fresh "$work/results"
	"${mpirun[@]}" -np "$1" "$io500" "$work/config.ini" 2>/dev/null |
		awk -v np="$1" '$1=="[RESULT]" && $3 > 0 {printf "%s\tio500\t%s\t%.6f\n", np, $2, $3}'
}

for np in $nps; do
	run_fsbench "$np" >/dev/null; run_io500 "$np" >/dev/null # unrecorded
	alternate "$pairs" "$out" run_fsbench run_io500 "$np"
done

echo "# $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, $pairs pairs after 1 unrecorded, in $dir, caches dropped before each phase: $drop_flag; data: ${data:-both defaults}; a rank: ior-easy ${easy_mib} MiB, ior-hard $hard_segs transfers, mdtest-easy $easy_files files, mdtest-hard $hard_files files; raw figures in $out"
pair_table "$out" io500 IO500 ranks
