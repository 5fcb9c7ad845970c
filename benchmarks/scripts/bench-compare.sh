#!/usr/bin/env bash
# Runs fio and fsbench on the same jobs on the same path and prints their
# throughput side by side: 1 MiB sequential writes and reads of one file per
# job, buffered and O_DIRECT, at 1 and 4 jobs. Also reports fsbench's peak
# memory at -p 16. Usage: bench-compare.sh [DIR] (default: a new directory
# under the repository, which is on the machine's disk). Each row shows the
# medians and their ratio (fsbench/fio), the ratio to fio writing fresh data,
# the ratio of the two tools' best runs ("best") and in how many of the
# pairs fsbench was ahead ("ahead").
#
# Then io_uring rows (uring-compare.sh): 4 KiB random reads, O_DIRECT, one
# thread, fio's io_uring beside fsbench's at queue depths URING_DEPTHS
# (default "1 32"), URING_RUNTIME seconds a run (default 4), RUNS pairs,
# and the device's limit (fio with URING_LIMIT_JOBS threads at depth 64,
# default 4; 0: none).
#
# Environment: SIZE (per job, default 1G), JOBS (default "1 4"), RUNS
# (repetitions, the median is shown; default 3), WARMUP (runs of each tool
# before each row's measured ones, not counted; default 1: the first
# writes after the caches are dropped land on memory the machine has not
# touched for a while, and are slower whichever tool makes them).
set -euo pipefail
cd "$(dirname "$0")/../.."
FSBENCH=${FSBENCH:-bin/fsbench}
SIZE=${SIZE:-1G}
JOBS=${JOBS:-"1 4"}
RUNS=${RUNS:-3}
WARMUP=${WARMUP:-1}
command -v fio >/dev/null || { echo "bench-compare: fio is not installed (make test-deps)" >&2; exit 1; }
command -v jq >/dev/null || command -v python3 >/dev/null || { echo "bench-compare: need python3" >&2; exit 1; }
[ -x "$FSBENCH" ] || { echo "bench-compare: build fsbench first (make build)" >&2; exit 1; }

base=${1:-}
if [ -z "$base" ]; then
	base=$(mktemp -d "$PWD/.bench-compare.XXXXXX")
	trap 'rm -rf "$base"' EXIT
fi
work=$(mktemp -d "$base/run.XXXXXX")
# shellcheck source=benchmarks/scripts/host-memory.sh
source benchmarks/scripts/host-memory.sh
trap 'rm -rf "$work"; [ -n "${1:-}" ] || rm -rf "$base"; release_freed_memory' EXIT
hold_freed_memory

drop() { sync; [ "$(id -u)" -eq 0 ] && echo 3 > /proc/sys/vm/drop_caches || true; }

# fio_mibs RW JOBS DIRECT [EXTRA] -> MiB/s (aggregate)
fio_mibs() {
	local rw=$1 jobs=$2 direct=$3 extra=${4:-} d="$work/fio"
	mkdir -p "$d"
	if [ "$rw" = read ]; then
		fio --name=lay --directory="$d" --rw=write --bs=1M --size="$SIZE" --numjobs="$jobs" --direct="$direct" --fallocate=none --output=/dev/null >/dev/null
		drop
	fi
	fio --name=job --directory="$d" --rw="$rw" --bs=1M --size="$SIZE" --numjobs="$jobs" --direct="$direct" $extra \
		--fallocate=none --group_reporting --output-format=json --invalidate=1 --filename_format='lay.$jobnum.0' 2>/dev/null |
		python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; k=sys.argv[1]; print("%.1f" % (j[k]["bw_bytes"]/1048576))' "$rw"
	rm -rf "$d"
}

# fsbench_mibs JOBS DIRECT -> "write read" MiB/s
fsbench_mibs() {
	local jobs=$1 direct=$2 flag=""
	[ "$direct" = 1 ] && flag=--direct
	drop
	"$FSBENCH" bench "$work" -q --json -p "$jobs" --block-size 1M --big-file-size "$SIZE" --small-file-count 0 $flag |
		python3 -c 'import json,sys; r=json.load(sys.stdin); p={x["name"]:x for x in r["phases"]}; print("%.1f %.1f %d" % (p["write-big"]["bytes_per_sec"]/1048576, p["read-big"]["bytes_per_sec"]/1048576, r["usage"]["peak_rss_bytes"]))'
}

median() { python3 -c 'import sys,statistics; print("%.1f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

# compare "FIO_RUNS" "FSBENCH_RUNS" -> both medians, their ratio, the ratio
# of the two tools' best runs, and in how many pairs (run k of each)
# fsbench was ahead: "1000.0 1020.0 1.02 1.05 4/7". On a shared or virtual
# machine interference only slows a run down (this machine class backs
# memory again on first touch after the host took it back, and a run that
# lands there goes several times slower, whichever tool makes it), so the
# best run is each tool's own ceiling; the medians stay the headline figures.
compare() {
	python3 -c 'import sys, statistics
f=[float(x) for x in sys.argv[1].split()]; s=[float(x) for x in sys.argv[2].split()]
mf, ms = statistics.median(f), statistics.median(s)
print("%.1f %.1f %.2f %.2f %d/%d" % (mf, ms, ms/mf if mf else 0, max(s)/max(f) if max(f) else 0,
      sum(b > a for a, b in zip(f, s)), len(f)))' "$1" "$2"
}

# fio's default reuses one buffer for every write (changing a few bytes of
# it); fsbench makes every block unique. --refill_buffers makes fio write
# fresh data too: the "fresh" columns compare the same work.
printf '%-28s %12s %12s %7s %14s %7s %7s %7s\n' "job (1 MiB blocks, $SIZE/job)" "fio MiB/s" "fsbench" "ratio" "fio fresh" "ratio" "best" "ahead"
for direct in 0 1; do
	for jobs in $JOBS; do
		fw=(); fr=(); sw=(); sr=(); ff=()
		for _ in $(seq "$WARMUP"); do
			fsbench_mibs "$jobs" "$direct" >/dev/null
			drop; fio_mibs write "$jobs" "$direct" >/dev/null
		done
		for run in $(seq "$RUNS"); do
			# Alternate which tool goes first: whatever the previous run
			# leaves behind (writeback, reclaim) falls on each in turn.
			if [ $((run % 2)) = 0 ]; then
				read -r w r _ < <(fsbench_mibs "$jobs" "$direct"); sw+=("$w"); sr+=("$r")
			fi
			drop; fw+=("$(fio_mibs write "$jobs" "$direct")")
			drop; ff+=("$(fio_mibs write "$jobs" "$direct" --refill_buffers)")
			fr+=("$(fio_mibs read "$jobs" "$direct")")
			if [ $((run % 2)) = 1 ]; then
				read -r w r _ < <(fsbench_mibs "$jobs" "$direct"); sw+=("$w"); sr+=("$r")
			fi
		done
		echo "  runs, -p $jobs direct=$direct: fio write ${fw[*]} | fsbench write ${sw[*]} | fio read ${fr[*]} | fsbench read ${sr[*]}" >&2
		mode=buffered; [ "$direct" = 1 ] && mode=direct
		for rw in write read; do
			if [ $rw = write ]; then fa=("${fw[@]}") sa=("${sw[@]}"); else fa=("${fr[@]}") sa=("${sr[@]}"); fi
			read -r f s ratio best ahead < <(compare "${fa[*]}" "${sa[*]}")
			fresh=- fratio=-
			if [ $rw = write ]; then
				fresh=$(median "${ff[@]}")
				fratio=$(python3 -c "print('%.2f' % ($s/$fresh if $fresh else 0))")
			fi
			printf '%-28s %12s %12s %7s %14s %7s %7s %7s\n' "$rw $mode -p $jobs" "$f" "$s" "$ratio" "$fresh" "$fratio" "$best" "$ahead"
		done
	done
done
read -r _ _ rss < <(SIZE=64M; "$FSBENCH" bench "$work" -q --json -p 16 --big-file-size 64M --small-file-count 100 |
	python3 -c 'import json,sys; r=json.load(sys.stdin); print(0, 0, r["usage"]["peak_rss_bytes"])')
echo "fsbench peak memory at -p 16 (64 MiB big files, 100 small files per thread): $((rss / 1048576)) MiB"
# io_uring: the same file read by both tools at each queue depth.
WORKLOADS=randread:4K DEPTHS=${URING_DEPTHS:-"1 32"} RUNTIME=${URING_RUNTIME:-4} RUNS=$RUNS SIZE=$SIZE FSBENCH=$FSBENCH \
	LIMIT_JOBS=${URING_LIMIT_JOBS:-4} \
	bash benchmarks/scripts/uring-compare.sh "$work:direct"
