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
# turn. Before a row's pairs, its files are read once, whole (warm): on a
# virtual machine, a file not read for a while comes from below the host's
# cache, and the first runs of a row ramped from a tenth of the rate up to
# it, whichever tool ran them. CPU per I/O is the process's user+system
# time (getrusage, through /usr/bin/time) over its operations: fio's and
# fsbench's whole runs; "cs" is the process's voluntary context switches
# per I/O the same way (its threads going to sleep: waits for completions,
# and whatever else wakes up), which load on the machine disturbs less
# than IOPS.
#
# After each directory's randread rows, the device's limit (LIMIT_JOBS,
# default 4; 0: no such row): fio with LIMIT_JOBS threads at depth 64 on
# the same file beside fsbench's one thread at depth 64 (the goal: within
# 5%).
#
# Then, for each workload, the synchronous engine (one pread or pwrite at a
# time per thread) at SYNC_THREADS threads (default "1 4 16 32 64"; ""
# for none): fsbench --ioengine sync -p N beside fio --ioengine=psync
# --numjobs=N --thread, each thread on a file of its own of SIZE/N (laid
# out once by each tool and kept: DIR/uring-compare-sync-N,
# DIR/uring-compare-fio-N).
#
# Usage: uring-compare.sh DIR[:MODE]... (a row set per directory; MODE is
# direct, buffered or auto: O_DIRECT where the file system takes it).
# Environment: DEPTHS (default "1 4 16 32 64"), RUNS (pairs, default 6),
# RUNTIME (seconds, default 4), SIZE (default 256M), WORKLOADS (default
# "randread:4K randwrite:4K read:1M": 4 KiB random reads and writes in
# place and 1 MiB sequential reads), MODE (the default of the directories'
# MODE: auto unless set), FIO_IOMEM (fio's --iomem, e.g. shmhuge: its
# buffers in huge pages, as fsbench's O_DIRECT buffers are; needs
# vm.nr_hugepages; default: fio's own, malloc).
set -euo pipefail
cd "$(dirname "$0")/../.."
FSBENCH=${FSBENCH:-bin/fsbench}
DEPTHS=${DEPTHS:-"1 4 16 32 64"}
RUNS=${RUNS:-6}
RUNTIME=${RUNTIME:-4}
SIZE=${SIZE:-256M}
WORKLOADS=${WORKLOADS:-"randread:4K randwrite:4K read:1M"}
LIMIT_JOBS=${LIMIT_JOBS:-4}
MODE=${MODE:-auto}
SYNC_THREADS=${SYNC_THREADS-"1 4 16 32 64"}
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

# warm DIRECT DIR...: read the files under each DIR once, whole, with
# O_DIRECT when DIRECT is 1 (the host's cache is what it warms).
warm() {
	local flag=() f
	[ "$1" = 1 ] && flag=(iflag=direct)
	shift
	find "$@" -type f -print0 | while IFS= read -r -d '' f; do
		dd if="$f" of=/dev/null bs=1M "${flag[@]}" status=none
	done
}

# fsbench_args DIR RW BS DIRECT: the fsbench command on the kept file.
fsbench_args() {
	local flag=""
	[ "$4" = 1 ] && flag=--direct
	echo bench "$1" -q --json --drop-caches never --depth 0 --width 1 --files 1 --file-size "$SIZE" \
		--tree-dir uring-compare --rw "$2" --xfer-size "$3" $flag
}

# per_thread N: SIZE/N in MiB, at least 1 MiB.
per_thread() { echo "$(( $(numfmt --from=iec "$SIZE") / $1 / 1048576 > 0 ? $(numfmt --from=iec "$SIZE") / $1 / 1048576 : 1 ))M"; }

# fsbench_run DIR RW BS DIRECT DEPTH [THREADS] -> "iops cpu_us_per_io csw_per_io"
# (with THREADS: the sync engine, THREADS threads, a file each)
fsbench_run() {
	local args
	if [ -n "${6:-}" ]; then
		args="bench $1 -q --json --drop-caches never --depth 0 --width 1 --files $6 -p $6 --file-size $(per_thread "$6")
			--tree-dir uring-compare-sync-$6 --rw $2 --xfer-size $3 --ioengine sync"
		[ "$4" = 1 ] && args+=" --direct"
	else
		args="$(fsbench_args "$1" "$2" "$3" "$4") --ioengine io_uring --iodepth $5"
	fi
	# shellcheck disable=SC2086
	/usr/bin/time -o "$tmp/t" -f "%U %S %w" "$FSBENCH" $args --duration "${RUNTIME}s" >"$tmp/o"
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["phases"][-1]; u,s,w=open(sys.argv[2]).read().split()[-3:]
print("%.1f %.2f %.4f" % (p["ops_per_sec"], (float(u)+float(s))*1e6/p["ops"], float(w)/p["ops"]))' "$tmp/o" "$tmp/t"
}

# fio_run FILE RW BS DIRECT DEPTH [JOBS] [sync] -> "iops cpu_us_per_io csw_per_io"
# (JOBS threads, default 1, reported as one group; sync: psync, a file of
# SIZE/JOBS each in FILE's directory's uring-compare-fio-JOBS)
fio_run() {
	local dir=read jobs=() where=(--filename="$1" --ioengine=io_uring --iodepth="$5" --size="$SIZE")
	case $2 in *write) dir=write ;; esac
	[ "${6:-1}" -gt 1 ] && jobs=(--numjobs="$6" --thread --group_reporting)
	if [ "${7:-}" = sync ]; then
		where=(--directory="${1%/*/*}/uring-compare-fio-$6" --ioengine=psync --size="$(per_thread "$6")")
	fi
	/usr/bin/time -o "$tmp/t" -f "%U %S %w" fio --name=job "${where[@]}" --rw="$2" \
		--bs="$3" --direct="$4" --time_based --runtime="$RUNTIME" --invalidate=0 \
		"${jobs[@]}" ${FIO_IOMEM:+--iomem="$FIO_IOMEM"} --output-format=json >"$tmp/o" 2>/dev/null
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0][sys.argv[3]]; u,s,w=open(sys.argv[2]).read().split()[-3:]; n=max(j["total_ios"],1)
print("%.1f %.2f %.4f" % (j["iops"], (float(u)+float(s))*1e6/n, float(w)/n))' "$tmp/o" "$tmp/t" "$dir"
}

# summary "FIO" "FSBENCH" (triples "iops cpu csw", space-separated lists)
# -> medians, ratios and how many pairs fsbench was ahead in.
summary() {
	python3 -c 'import sys, statistics as st
f=[float(x) for x in sys.argv[1].split()]; s=[float(x) for x in sys.argv[2].split()]
fi, fc, fw, si, sc, sw = f[0::3], f[1::3], f[2::3], s[0::3], s[1::3], s[2::3]
mi, ni, mc, nc = st.median(fi), st.median(si), st.median(fc), st.median(sc)
print("%.0f %.0f %.2f %.2f %.2f %.2f %.3f %.3f %d/%d" % (mi, ni, ni/mi if mi else 0, mc, nc, nc/mc if mc else 0,
	st.median(fw), st.median(sw), sum(b > a for a, b in zip(fi, si)), len(fi)))' "$1" "$2"
}

# row LABEL DIR FILE RW BS DIRECT DEPTH FIOJOBS [SYNC_THREADS]: RUNS
# alternating pairs, every run on stderr, the medians' row on stdout. With
# SYNC_THREADS, the synchronous engines at that many threads.
row() {
	local l0 f=() s=() run sync=""
	[ -n "${9:-}" ] && sync=sync
	l0=$(cut -d' ' -f1 /proc/loadavg)
	for run in $(seq "$RUNS"); do
		if [ $((run % 2)) = 0 ]; then s+=($(fsbench_run "$2" "$4" "$5" "$6" "$7" "${9:-}")); fi
		f+=($(fio_run "$3" "$4" "$5" "$6" "$7" "$8" $sync))
		if [ $((run % 2)) = 1 ]; then s+=($(fsbench_run "$2" "$4" "$5" "$6" "$7" "${9:-}")); fi
	done
	echo "  runs, $1 (IOPS CPU-us cs): fio ${f[*]} | fsbench ${s[*]}" >&2
	read -r mi ni ri mc nc rc mw nw ahead < <(summary "${f[*]}" "${s[*]}")
	printf '%-34s %9s %9s %6s %8s %8s %6s %7s %7s %6s %s\n' "$1" "$mi" "$ni" "$ri" "$mc" "$nc" "$rc" "$mw" "$nw" "$ahead" "$l0/$(cut -d' ' -f1 /proc/loadavg)"
}

echo "fio $(fio --version) --ioengine=io_uring vs fsbench $("$FSBENCH" --version 2>/dev/null | awk '{print $2}') --ioengine io_uring, one thread, SIZE=$SIZE, ${RUNTIME}s a run, medians of $RUNS alternating pairs"
printf '%-34s %9s %9s %6s %8s %8s %6s %7s %7s %6s %s\n' job "fio IOPS" fsbench ratio "fio us" fsbench ratio "fio cs" fsbench ahead "load (1 min, before/after)"
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
		warm "$direct" "$dir/uring-compare"
		for depth in $DEPTHS; do
			row "$rw $bs $mode $fstype qd $depth" "$dir" "$file" "$rw" "$bs" "$direct" "$depth" 1
		done
		if [ "$rw" = randread ] && [ "$LIMIT_JOBS" -gt 0 ]; then
			# The device's limit: fio's LIMIT_JOBS threads at depth 64.
			row "$rw $bs $mode $fstype limit" "$dir" "$file" "$rw" "$bs" "$direct" 64 "$LIMIT_JOBS"
		fi
		for n in $SYNC_THREADS; do
			# Each tool's files laid out once, then kept.
			# shellcheck disable=SC2046
			"$FSBENCH" bench "$dir" -q --drop-caches never --depth 0 --width 1 --files "$n" -p "$n" --file-size "$(per_thread "$n")" \
				--tree-dir "uring-compare-sync-$n" --rw read --xfer-size 1M --ops 1 >/dev/null
			mkdir -p "$dir/uring-compare-fio-$n"
			fio --name=job --directory="$dir/uring-compare-fio-$n" --numjobs="$n" --thread --size="$(per_thread "$n")" \
				--rw=read --bs=1M --output=/dev/null >/dev/null 2>&1
			warm "$direct" "$dir/uring-compare-sync-$n" "$dir/uring-compare-fio-$n"
			row "$rw $bs $mode $fstype sync -p $n" "$dir" "$file" "$rw" "$bs" "$direct" 1 "$n" "$n"
		done
	done
done
