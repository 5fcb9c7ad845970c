#!/usr/bin/env bash
# Compares fsbench io500's phases with IOR and mdtest built from the
# hpc/ior repository, on the same jobs: 2 and 4 ranks, on tmpfs and on the
# local disk, in alternating pairs (fsbench first in odd pairs, IOR first in
# even ones), and prints the median of each phase a side, their ratio and
# its 95% interval (pairs.sh). Not run by CI.
#
#   benchmarks/scripts/hpc-compare.sh IOR_DIR [PAIRS] [DISK_DIR]
#
# IOR_DIR holds src/ior and src/mdtest (./bootstrap && ./configure && make
# with Debian's Open MPI). Every figure is in IO500's units: GiB/s for the
# ior phases, thousands of operations a second for the mdtest ones.
# fsbench's ranks are processes started by the same mpirun as IOR's
# (RANKS=threads: fsbench -p N in one process). While it runs, memory the
# guest frees stays in the guest (host-memory.sh). FS=tmpfs or FS=disk runs
# one of the two, NP=2 or NP=4 one of the rank counts. DROP=1 (root)
# starts every phase from a clean cache on both sides (the script before
# IOR's and mdtest's, fsbench io500 --drop-caches always before its own):
# the kernel's caches are dropped before the phases that read or stat, so
# that the disk's reads measure the disk, not the page cache, and dirty
# data is written back before the others, so that no phase pays for the
# writeback of the ones before it.
# FRESH=1 (the default) starts every run on the disk, of either side, in
# the same state: the inodes the run before deleted past the time in
# which ext4 without a journal (this machine's disk) will not give them
# out again (vm.dirty_expire_centisecs, and 5 s), and the caches dropped.
# A create there skips, one by one, the free inodes deleted in that time,
# so that a create phase measured how soon after the last run's deletes
# it came and what the cache held (one process made 2 to 12 thousand
# files a second there, erratically, and 22 to 32 thousand from dropped
# caches; benchmarks/records/hpc-io500.md, "The disk's creates"). FRESH=0 keeps that
# history.
# DATA=timestamp (the default) writes fsbench's transfers from one buffer,
# as IOR's and mdtest's are written (fsbench io500 --data-packet-type
# timestamp), so that both sides move the same data; DATA=random keeps
# fsbench's own content, which no transfer repeats, and the two sides'
# writes then move different data.
# WARMUP (default 1) runs of each tool before each block of pairs are not
# recorded: the first run after the last block's files were freed wrote
# into memory the host had taken back (0.3 to 1.4 GiB/s against 2 to 10).
set -euo pipefail
ior_dir=${1:?usage: hpc-compare.sh IOR_DIR [PAIRS] [DISK_DIR]}
pairs=${2:-6}
disk=${3:-/var/tmp/fsbench-hpc}
here=$(cd "$(dirname "$0")/../.." && pwd)
fsbench=${FSBENCH:-$here/bin/fsbench}
ior=$ior_dir/src/ior
mdtest=$ior_dir/src/mdtest
mpirun=(mpirun --allow-run-as-root --oversubscribe)
# The same amounts a rank on both sides; EASY_MIB, HARD_SEGS, EASY_FILES
# and HARD_FILES set others (phases of a few milliseconds, as the defaults
# make on tmpfs, time their start and end more than their operations); the
# tmpfs is made as large as they need.
ranks=${RANKS:-processes}
case $ranks in processes | threads) ;; *) echo "hpc-compare.sh: RANKS is processes or threads, not $ranks" >&2; exit 2 ;; esac
easy_mib=${EASY_MIB:-32} hard_segs=${HARD_SEGS:-1000} easy_files=${EASY_FILES:-2000} hard_files=${HARD_FILES:-1000}
filesystems=${FS:-tmpfs disk} nps=${NP:-2 4} drop=${DROP:-0} warmup=${WARMUP:-1} data=${DATA:-timestamp} fresh=${FRESH:-1}
case $data in random | timestamp) ;; *) echo "hpc-compare.sh: DATA is random or timestamp, not $data" >&2; exit 2 ;; esac
case $drop in 0 | 1) ;; *) echo "hpc-compare.sh: DROP is 0 or 1, not $drop" >&2; exit 2 ;; esac
case $fresh in 0 | 1) ;; *) echo "hpc-compare.sh: FRESH is 0 or 1, not $fresh" >&2; exit 2 ;; esac
case $warmup in '' | *[!0-9]*) echo "hpc-compare.sh: WARMUP is a count of runs, not $warmup" >&2; exit 2 ;; esac
for a in "EASY_MIB=$easy_mib" "HARD_SEGS=$hard_segs" "EASY_FILES=$easy_files" "HARD_FILES=$hard_files"; do
	case ${a#*=} in '' | *[!0-9]* | 0*) echo "hpc-compare.sh: ${a%%=*} is a count of at least 1, not ${a#*=}" >&2; exit 2 ;; esac
done
for n in $nps; do
	case $n in 2 | 4) ;; *) echo "hpc-compare.sh: NP is 2, 4 or both, not $n" >&2; exit 2 ;; esac
done
for f in $filesystems; do
	case $f in tmpfs | disk) ;; *) echo "hpc-compare.sh: FS is tmpfs, disk or both, not $f" >&2; exit 2 ;; esac
done
drop_flag=never
if [ "$drop" = 1 ]; then drop_flag=always; fi
# dropped: before a phase that reads or stats, with DROP=1; flushed:
# before the others.
dropped() { if [ "$drop" = 1 ]; then sync && echo 3 >/proc/sys/vm/drop_caches; fi; }
flushed() { if [ "$drop" = 1 ]; then sync; fi; }
# fresh FS: the start of a run; on the disk (FRESH=1) once the inodes
# the last run deleted are out of ext4's window, from dropped caches; on
# either, with the free memory warmed (host-memory.sh).
# ended: the end of a run, from which that window is counted.
window=$(($(cat /proc/sys/vm/dirty_expire_centisecs) / 100 + 6)) last_end=0
fresh() {
	if [ "$1" = disk ] && [ "$fresh" = 1 ]; then
		sync
		local wait=$((last_end + window - $(date +%s)))
		if [ $wait -gt 0 ]; then sleep $wait; fi
		echo 3 >/proc/sys/vm/drop_caches
	fi
	warm_free_memory
}
ended() { last_end=$(date +%s); }

# shellcheck source=benchmarks/scripts/host-memory.sh
source "$here/benchmarks/scripts/host-memory.sh"
# The tmpfs holds a run's files at 4 ranks (ior's, and mdtest's at a 4 KiB
# page each) and 512 MiB more; no more than three quarters of the memory
# available, since what a tmpfs holds cannot be written out to make room.
tmpfs_mib=$((4 * (easy_mib + hard_segs * 47008 / 1048576 + (easy_files + hard_files) * 4 / 1024) + 512))
if [[ $filesystems == *tmpfs* ]] && [ "$tmpfs_mib" -gt "$(available_mib 3 4)" ]; then
	echo "hpc-compare.sh: the tmpfs for these amounts needs $tmpfs_mib MiB, more than three quarters of the memory available" >&2
	exit 2
fi
tmpfs=$(mktemp -d /tmp/fsbench-hpc-tmpfs.XXXXXX)
mount -t tmpfs -o size="${tmpfs_mib}m" tmpfs "$tmpfs"
mkdir -p "$disk"
out=$(mktemp /tmp/fsbench-hpc.XXXXXX.tsv)
# shellcheck source=benchmarks/scripts/pairs.sh
source "$here/benchmarks/scripts/pairs.sh"
run_name=fsbench-compare-run # IOR's and mdtest's directory, the only one made under DISK_DIR
cleanup() { umount "$tmpfs" 2>/dev/null; rmdir "$tmpfs" 2>/dev/null; rm -rf "${disk:?}/$run_name"; release_freed_memory; }
trap cleanup EXIT
trap 'exit 1' INT TERM # the clean-up runs on these too
hold_freed_memory

# run_fsbench FS NP DIR: one fsbench io500 run, one line a phase. Its
# ranks are processes started by mpirun, as IOR's and mdtest's are
# (RANKS=threads: one process with a thread a rank instead).
run_fsbench() {
	local launch=("${mpirun[@]}" -np "$2") threads=1
	if [ "$ranks" = threads ]; then launch=() threads=$2; fi
	fresh "$1"
	"${launch[@]}" "$fsbench" io500 "$3" -p "$threads" -q -o json --stonewall 300s --drop-caches $drop_flag --data-packet-type "$data" --ior-easy-transfers $((easy_mib / 2)) \
		--ior-hard-segments $hard_segs --mdtest-easy-files $easy_files --mdtest-hard-files $hard_files |
		python3 -c 'import json,sys
r=json.load(sys.stdin)
for p in r["phases"]: print("%s\t%s\tfsbench\t%s\t%.6f" % (sys.argv[1], sys.argv[2], p["name"], p["value"]["value"]))' "$1" "$2"
	ended
}

# ior_rates FS NP PHASE: IOR's summary lines (write, read) as GiB/s.
ior_rates() {
	awk -v fs="$1" -v np="$2" -v ph="$3" '/^Summary of all tests/ {s=1; next}
		s && ($1=="write" || $1=="read") {printf "%s\t%s\tior\t%s-%s\t%.6f\n", fs, np, ph, $1, $2/1024}'
}

# mdtest_rates FS NP PHASE: mdtest's rates as kIOPS; a run of one phase
# (-C, -T, -E or -r) prints the others as 0.
mdtest_rates() {
	awk -v fs="$1" -v np="$2" -v ph="$3" '$1=="File" && $5 > 0 {
		n = ($2=="creation") ? "write" : ($2=="removal") ? "delete" : $2
		printf "%s\t%s\tior\t%s-%s\t%.6f\n", fs, np, ph, n, $5/1000}'
}

# run_ior FS NP DIR: IOR's and mdtest's phases in IO500's order, each its
# own run, with IO500's -e (fsync before close) on IOR's writes and -Y (sync
# after the creates) on mdtest's, as fsbench io500 does: a phase that reads
# what an earlier one wrote finds it after the same phases on both sides.
# (`ior -w -r` read its files a moment after writing them, while fsbench's
# read phase comes after the other write phases and find: on the disk, the
# page cache and its writeback were then in another state.) GNU find
# stands in for IO500's find, for its time only. mdtest's -N 1: a rank stats, reads and
# deletes other ranks' files (those of rank+1, +2 and +3), as fsbench's
# ranks work on rank+1's; without it each mdtest rank found its own files,
# created on its own processor, and the two sides did not do the same job.
run_ior() {
	local fs=$1 np=$2 d=$3/$run_name
	local run=("${mpirun[@]}" -np "$np")
	local easy=(-a POSIX -F -C -k -e -t 2m -b ${easy_mib}m -o "$d/easy/f")
	local hard=(-a POSIX -C -k -e -t 47008 -b 47008 -s $hard_segs -o "$d/hard/f")
	local mde=(-F -u -N 1 -n $easy_files -d "$d/mde") mdh=(-F -N 1 -n $hard_files -w 3901 -e 3901 -d "$d/mdh")
	rm -rf "$d" && fresh "$fs" && mkdir -p "$d/easy" "$d/hard" && touch "$d/timestampfile"
	flushed && "${run[@]}" "$ior" -w "${easy[@]}" | ior_rates "$fs" "$np" ior-easy
	flushed && "${run[@]}" "$mdtest" -C -Y "${mde[@]}" | mdtest_rates "$fs" "$np" mdtest-easy
	flushed && "${run[@]}" "$ior" -w "${hard[@]}" | ior_rates "$fs" "$np" ior-hard
	flushed && "${run[@]}" "$mdtest" -C -Y "${mdh[@]}" | mdtest_rates "$fs" "$np" mdtest-hard
	find "$d" -newer "$d/timestampfile" -size 3901c -name '*01*' >/dev/null
	dropped && "${run[@]}" "$ior" -r "${easy[@]}" | ior_rates "$fs" "$np" ior-easy
	dropped && "${run[@]}" "$mdtest" -T "${mde[@]}" | mdtest_rates "$fs" "$np" mdtest-easy
	dropped && "${run[@]}" "$ior" -r "${hard[@]}" | ior_rates "$fs" "$np" ior-hard
	dropped && "${run[@]}" "$mdtest" -T "${mdh[@]}" | mdtest_rates "$fs" "$np" mdtest-hard
	flushed && "${run[@]}" "$mdtest" -r "${mde[@]}" | mdtest_rates "$fs" "$np" mdtest-easy
	dropped && "${run[@]}" "$mdtest" -E "${mdh[@]}" | mdtest_rates "$fs" "$np" mdtest-hard
	flushed && "${run[@]}" "$mdtest" -r "${mdh[@]}" | mdtest_rates "$fs" "$np" mdtest-hard
	rm -rf "$d"
	ended
}

for fs in $filesystems; do
	dir=$tmpfs
	[ $fs = disk ] && dir=$disk
	for np in $nps; do
		# Unrecorded: the first run of a block meets memory this guest
		# has given back to its host, whichever tool it is.
		for _ in $(seq 1 "$warmup"); do
			run_fsbench $fs $np "$dir" >/dev/null; run_ior $fs $np "$dir" >/dev/null
		done
		alternate "$pairs" "$out" run_fsbench run_ior $fs $np "$dir"
	done
done

echo "# $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, $pairs pairs after $warmup unrecorded, fsbench ranks as $ranks, caches dropped before reads and stats: $drop_flag, before every run on the disk: $([ "$fresh" = 1 ] && echo yes || echo no); fsbench's data: $data; a rank: ior-easy ${easy_mib} MiB, ior-hard $hard_segs transfers, mdtest-easy $easy_files files, mdtest-hard $hard_files files; raw figures in $out"
pair_table "$out" ior IOR/mdtest fs ranks
