#!/usr/bin/env bash
# Runs fio and fsbench on the same jobs on the same path and prints IOPS,
# bandwidth and mean latency side by side with the ratio fsbench/fio:
# sequential and random reads and writes, 4 KiB and 1 MiB transfers,
# buffered and O_DIRECT, one file of SIZE per job, every block once.
#
# Both tools do the same thing: pread/pwrite (fio's psync engine), no fsync,
# writes into a freshly created file (fio --fallocate=none, as fsbench does
# not preallocate) with fresh data in every block (fio --refill_buffers, as
# fsbench writes blocks that differ, against deduplication), reads of a
# laid-out file after the page cache was dropped (as root; fio
# --invalidate=1 drops the file's pages otherwise), and the same fadvise
# hint (fio's fadvise_hint: random or sequential).
#
# Usage: fio-compare.sh [DIR] (default: a new directory under the
# repository, which is on the machine's disk).
# Environment: SIZE (per job, default 256M), JOBS (default 1), RUNS
# (repetitions, fio and fsbench alternating; default 3), STAT (median, the
# default, or best: the highest IOPS and MiB/s and lowest latency of the
# runs, for a machine where other work only ever slows a run down), XFERS
# (default "4K 1M"), MODES (default "buffered direct").
set -euo pipefail
cd "$(dirname "$0")/../.."
FSBENCH=${FSBENCH:-bin/fsbench}
SIZE=${SIZE:-256M}
JOBS=${JOBS:-1}
RUNS=${RUNS:-3}
XFERS=${XFERS:-"4K 1M"}
MODES=${MODES:-"buffered direct"}
STAT=${STAT:-median}
command -v fio >/dev/null || { echo "fio-compare: fio is not installed (make test-deps)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "fio-compare: need python3" >&2; exit 1; }
[ -x "$FSBENCH" ] || { echo "fio-compare: build fsbench first (make build)" >&2; exit 1; }

base=${1:-}
if [ -z "$base" ]; then
	base=$(mktemp -d "$PWD/.fio-compare.XXXXXX")
fi
work=$(mktemp -d "$base/run.XXXXXX")
# shellcheck source=benchmarks/scripts/host-memory.sh
source benchmarks/scripts/host-memory.sh
trap 'rm -rf "$work"; [ -n "${1:-}" ] || rm -rf "$base"; release_freed_memory' EXIT
hold_freed_memory

drop() { sync; if [ "$(id -u)" -eq 0 ]; then echo 3 > /proc/sys/vm/drop_caches; fi; }

# fio_run RW BS DIRECT -> "iops MiB/s mean_latency_us"
fio_run() {
	local rw=$1 bs=$2 direct=$3 d="$work/fio" dir=read
	mkdir -p "$d"
	case $rw in *write) dir=write ;; esac
	if [ $dir = read ]; then
		# Lay the files out first, with large writes, as fsbench does.
		fio --name=lay --directory="$d" --rw=write --bs=1M --size="$SIZE" --numjobs="$JOBS" --direct=0 \
			--fallocate=none --filename_format='f.$jobnum' --output=/dev/null >/dev/null
	fi
	drop
	fio --name=job --directory="$d" --ioengine=psync --rw="$rw" --bs="$bs" --size="$SIZE" --numjobs="$JOBS" \
		--direct="$direct" --fallocate=none --invalidate=1 --refill_buffers=1 --group_reporting --filename_format='f.$jobnum' \
		--output-format=json 2>/dev/null |
		python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0][sys.argv[1]]; print("%.1f %.2f %.1f" % (j["iops"], j["bw_bytes"]/1048576, j["lat_ns"]["mean"]/1000))' "$dir"
	rm -rf "$d"
}

# fsbench_run RW BS DIRECT -> "iops MiB/s mean_latency_us"
fsbench_run() {
	local rw=$1 bs=$2 direct=$3 flag=""
	[ "$direct" = 1 ] && flag=--direct
	drop
	"$FSBENCH" bench "$work" -q --json --rw "$rw" --xfer-size "$bs" --file-size "$SIZE" -p "$JOBS" $flag |
		python3 -c 'import json,sys; r=json.load(sys.stdin); p=[x for x in r["phases"] if x["name"]==sys.argv[1]][0]; print("%.1f %.2f %.1f" % (p["ops_per_sec"], p["bytes_per_sec"]/1048576, p["latency"]["mean_us"]))' "$rw"
}

# pick high|low VALUES...: the median, or the best of the runs (STAT=best).
pick() { python3 -c 'import sys,statistics; v=[float(x) for x in sys.argv[3:]]; print("%.2f" % (statistics.median(v) if sys.argv[1]!="best" else (max(v) if sys.argv[2]=="high" else min(v))))' "$STAT" "$@"; }
ratio() { python3 -c 'import sys; f,s=float(sys.argv[1]),float(sys.argv[2]); print("%.2f" % (s/f) if f else "-")' "$1" "$2"; }

echo "fio $(fio --version) vs fsbench $("$FSBENCH" --version 2>/dev/null | awk '{print $2}') on $(df -T "$work" | awk 'NR==2{print $2" "$1}'), SIZE=$SIZE per job, JOBS=$JOBS, $STAT of $RUNS runs"
printf '%-24s %10s %10s %6s %10s %10s %6s %10s %10s %6s\n' job "fio IOPS" fsbench ratio "fio MiB/s" fsbench ratio "fio lat" fsbench ratio
for mode in $MODES; do
	direct=0
	[ "$mode" = direct ] && direct=1
	for bs in $XFERS; do
		for rw in write read randwrite randread; do
			fi=(); fb=(); fl=(); si=(); sb=(); sl=()
			for _ in $(seq "$RUNS"); do
				read -r a b c < <(fio_run "$rw" "$bs" "$direct"); fi+=("$a"); fb+=("$b"); fl+=("$c")
				read -r a b c < <(fsbench_run "$rw" "$bs" "$direct"); si+=("$a"); sb+=("$b"); sl+=("$c")
			done
			i1=$(pick high "${fi[@]}"); i2=$(pick high "${si[@]}")
			b1=$(pick high "${fb[@]}"); b2=$(pick high "${sb[@]}")
			l1=$(pick low "${fl[@]}"); l2=$(pick low "${sl[@]}")
			printf '%-24s %10s %10s %6s %10s %10s %6s %9sus %9sus %6s\n' "$rw $bs $mode" \
				"$i1" "$i2" "$(ratio "$i1" "$i2")" "$b1" "$b2" "$(ratio "$b1" "$b2")" "$l1" "$l2" "$(ratio "$l1" "$l2")"
		done
	done
done
