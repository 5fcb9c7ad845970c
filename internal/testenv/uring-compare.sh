#!/usr/bin/env bash
# Runs fio --ioengine=io_uring and fsbench --ioengine io_uring on the same
# file at the same queue depths, one thread each, and prints IOPS and CPU
# per I/O side by side with the ratio fsbench/fio.
#
# One file of SIZE is laid out once by fsbench (a tree of one file kept in
# DIR/uring-compare, reused) and both tools read or write it in place for
# RUNTIME, time-based, with the same fadvise hint, no cache drop between
# runs (neither tool drops caches: other work on the machine keeps its
# cache). Pairs alternate which tool goes first, so whatever one run leaves
# behind (the host's cache of a virtual disk, writeback) falls on each in
# turn. CPU per I/O is the process's user+system time (getrusage, through
# /usr/bin/time) over its operations: fio's and fsbench's whole runs.
#
# Usage: uring-compare.sh DIR[:MODE]... (a row set per directory; MODE is
# direct, buffered or auto: O_DIRECT where the file system takes it).
# Environment: DEPTHS (default "1 4 16 32 64"), RUNS (pairs, default 6),
# RUNTIME (seconds, default 4), SIZE (default 256M), WORKLOADS (default
# "randread:4K"; also randwrite:4K, read:1M, ...), MODE (the default of
# the directories' MODE: auto unless set).
set -euo pipefail
cd "$(dirname "$0")/../.."
FSBENCH=${FSBENCH:-bin/fsbench}
DEPTHS=${DEPTHS:-"1 4 16 32 64"}
RUNS=${RUNS:-6}
RUNTIME=${RUNTIME:-4}
SIZE=${SIZE:-256M}
WORKLOADS=${WORKLOADS:-"randread:4K"}
MODE=${MODE:-auto}
command -v fio >/dev/null || { echo "uring-compare: fio is not installed (make test-deps)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "uring-compare: need python3" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "uring-compare: need /usr/bin/time (GNU time)" >&2; exit 1; }
[ -x "$FSBENCH" ] || { echo "uring-compare: build fsbench first (make build)" >&2; exit 1; }
[ $# -gt 0 ] || { echo "usage: uring-compare.sh DIR[:MODE]..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# direct_ok DIR MODE: 1 for O_DIRECT (auto: when DIR's file system takes it).
direct_ok() {
	case $2 in direct) echo 1; return ;; buffered) echo 0; return ;; esac
	if dd if=/dev/zero of="$1/.direct-probe" bs=4096 count=1 oflag=direct status=none 2>/dev/null; then echo 1; else echo 0; fi
	rm -f "$1/.direct-probe"
}

# fsbench_args DIR RW BS DIRECT: the fsbench command on the kept file.
fsbench_args() {
	local flag=""
	[ "$4" = 1 ] && flag=--direct
	echo bench "$1" -q --json --drop-caches never --depth 0 --width 1 --files 1 --file-size "$SIZE" \
		--tree-dir uring-compare --rw "$2" --xfer-size "$3" $flag
}

# fsbench_run DIR RW BS DIRECT DEPTH -> "iops cpu_us_per_io"
fsbench_run() {
	# shellcheck disable=SC2046
	/usr/bin/time -o "$tmp/t" -f "%U %S" "$FSBENCH" $(fsbench_args "$1" "$2" "$3" "$4") --duration "${RUNTIME}s" \
		--ioengine io_uring --iodepth "$5" >"$tmp/o"
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["phases"][-1]; u,s=open(sys.argv[2]).read().split()[-2:]
print("%.1f %.2f" % (p["ops_per_sec"], (float(u)+float(s))*1e6/p["ops"]))' "$tmp/o" "$tmp/t"
}

# fio_run FILE RW BS DIRECT DEPTH -> "iops cpu_us_per_io"
fio_run() {
	local dir=read
	case $2 in *write) dir=write ;; esac
	/usr/bin/time -o "$tmp/t" -f "%U %S" fio --name=job --filename="$1" --ioengine=io_uring --iodepth="$5" --rw="$2" \
		--bs="$3" --direct="$4" --size="$SIZE" --time_based --runtime="$RUNTIME" --invalidate=0 --output-format=json >"$tmp/o" 2>/dev/null
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0][sys.argv[3]]; u,s=open(sys.argv[2]).read().split()[-2:]
print("%.1f %.2f" % (j["iops"], (float(u)+float(s))*1e6/max(j["total_ios"],1)))' "$tmp/o" "$tmp/t" "$dir"
}

# summary "FIO" "FSBENCH" (pairs "iops cpu", space-separated lists) ->
# medians, ratios and how many pairs fsbench was ahead in.
summary() {
	python3 -c 'import sys, statistics as st
f=[float(x) for x in sys.argv[1].split()]; s=[float(x) for x in sys.argv[2].split()]
fi, fc, si, sc = f[0::2], f[1::2], s[0::2], s[1::2]
mi, ni, mc, nc = st.median(fi), st.median(si), st.median(fc), st.median(sc)
print("%.0f %.0f %.2f %.2f %.2f %.2f %d/%d" % (mi, ni, ni/mi if mi else 0, mc, nc, nc/mc if mc else 0, sum(b > a for a, b in zip(fi, si)), len(fi)))' "$1" "$2"
}

echo "fio $(fio --version) --ioengine=io_uring vs fsbench $("$FSBENCH" --version 2>/dev/null | awk '{print $2}') --ioengine io_uring, one thread, SIZE=$SIZE, ${RUNTIME}s a run, medians of $RUNS alternating pairs"
printf '%-34s %9s %9s %6s %8s %8s %6s %6s %s\n' job "fio IOPS" fsbench ratio "fio us" fsbench ratio ahead "load (1 min, before/after)"
for arg in "$@"; do
	dir=${arg%%:*} dmode=$MODE
	[ "$dir" = "$arg" ] || dmode=${arg#*:}
	direct=$(direct_ok "$dir" "$dmode")
	mode=buffered
	[ "$direct" = 1 ] && mode=direct
	fstype=$(df -T "$dir" | awk 'NR==2{print $2}')
	for job in $WORKLOADS; do
		rw=${job%%:*} bs=${job#*:}
		# Lay the file out (kept, reused by later runs).
		# shellcheck disable=SC2046
		"$FSBENCH" $(fsbench_args "$dir" read "$bs" "$direct") --ops 1 >/dev/null
		file="$dir/uring-compare/f1"
		for depth in $DEPTHS; do
			l0=$(cut -d' ' -f1 /proc/loadavg)
			f=() s=()
			for run in $(seq "$RUNS"); do
				if [ $((run % 2)) = 0 ]; then s+=($(fsbench_run "$dir" "$rw" "$bs" "$direct" "$depth")); fi
				f+=($(fio_run "$file" "$rw" "$bs" "$direct" "$depth"))
				if [ $((run % 2)) = 1 ]; then s+=($(fsbench_run "$dir" "$rw" "$bs" "$direct" "$depth")); fi
			done
			echo "  runs, $rw $bs $mode $fstype qd $depth (IOPS CPU-us): fio ${f[*]} | fsbench ${s[*]}" >&2
			read -r mi ni ri mc nc rc ahead < <(summary "${f[*]}" "${s[*]}")
			printf '%-34s %9s %9s %6s %8s %8s %6s %6s %s\n' "$rw $bs $mode $fstype qd $depth" "$mi" "$ni" "$ri" "$mc" "$nc" "$rc" "$ahead" "$l0/$(cut -d' ' -f1 /proc/loadavg)"
		done
	done
done
