#!/usr/bin/env bash
# What ior-hard-write's shared file costs a program of each kind, on tmpfs,
# 2 ranks started and bound to their cores by mpirun: every rank writes
# SEGS transfers of 47,008 bytes into one file, interleaved (IOR's -s SEGS
# -b 47008 -t 47008). The ranks take turns at the file's lock, and a rank
# waiting for it spins while the holder runs. Not run by CI.
#
#   benchmarks/scripts/shared-write-floor.sh [ROUNDS] [IOR_DIR]
#
# The programs, each run ROUNDS times in rotated order:
#   c        a C loop of pwrite, one thread a rank
#   c+tick   the same with a second thread that wakes every TICK_US
#            microseconds (default 10000), as a language runtime's monitor
#            thread does (Go's wakes at most 10 ms apart while a goroutine
#            runs)
#   go       the same loop in Go, each pwrite a raw system call (as
#            fsbench's on a local file system)
#   fsbench  fsbench bench with a shared-file write phase (benchmarks/records/hpc-io500.md)
#   ior      IOR's ior -w (with IOR_DIR: src/ior built there)
# It prints each program's median in GiB/s and its ratio to c's. Needs gcc,
# go and mpirun; FSBENCH (default bin/fsbench) names the binary.
set -euo pipefail
rounds=${1:-8}
ior_dir=${2:-}
here=$(cd "$(dirname "$0")/../.." && pwd)
fsbench=${FSBENCH:-$here/bin/fsbench}
segs=${SEGS:-16000} tick=${TICK_US:-10000}
case $rounds$segs$tick in *[!0-9]*) echo "shared-write-floor.sh: ROUNDS, SEGS and TICK_US are counts" >&2; exit 2 ;; esac
[ -x "$fsbench" ] || { echo "shared-write-floor.sh: no fsbench binary at $fsbench (make build)" >&2; exit 2; }
if [ -n "$ior_dir" ] && [ ! -x "$ior_dir/src/ior" ]; then
	echo "shared-write-floor.sh: no $ior_dir/src/ior" >&2
	exit 2
fi

work=$(mktemp -d /tmp/fsbench-floor.XXXXXX)
mnt=$work/mnt
mkdir -p "$mnt"
mount -t tmpfs -o size=3g tmpfs "$mnt"
# shellcheck source=benchmarks/scripts/host-memory.sh
source "$here/benchmarks/scripts/host-memory.sh"
cleanup() { umount "$mnt" 2>/dev/null; rm -rf "$work"; release_freed_memory; }
trap cleanup EXIT
trap 'exit 1' INT TERM # the clean-up runs on these too
hold_freed_memory

# Both loops: rank r's transfer s at (s*world + r) * 47008; the ranks meet
# at files in the directory before they start, and each prints its start
# and end (CLOCK_REALTIME, ns).
cat >"$work/floor.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long tick_us;

static void *tick(void *arg) {
	for (;;)
		usleep(tick_us);
	return arg;
}

static long long now(void) {
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
	const char *dir = argv[1];
	long segs = atol(argv[2]);
	tick_us = atol(argv[3]);
	int rank = atoi(getenv("OMPI_COMM_WORLD_RANK")), world = atoi(getenv("OMPI_COMM_WORLD_SIZE"));
	const size_t t = 47008;
	char *buf = aligned_alloc(4096, 49152), path[4096];
	memset(buf, 'f', t);
	if (tick_us > 0) {
		pthread_t th;
		pthread_create(&th, NULL, tick, NULL);
	}
	snprintf(path, sizeof path, "%s/file", dir);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	snprintf(path, sizeof path, "%s/ready.%d", dir, rank);
	close(open(path, O_WRONLY | O_CREAT, 0644));
	for (int r = 0; r < world; r++) {
		snprintf(path, sizeof path, "%s/ready.%d", dir, r);
		while (access(path, F_OK) != 0)
			usleep(50);
	}
	long long start = now();
	for (long s = 0; s < segs; s++)
		if (pwrite(fd, buf, t, (off_t)(s * world + rank) * t) != (ssize_t)t)
			return 1;
	close(fd);
	printf("%lld %lld\n", start, now());
	return 0;
}
EOF
mkdir -p "$work/go"
cat >"$work/go/main.go" <<'EOF'
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	dir := os.Args[1]
	segs, _ := strconv.Atoi(os.Args[2])
	rank, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_RANK"))
	world, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_SIZE"))
	const t = 47008
	buf := make([]byte, t)
	for i := range buf {
		buf[i] = 'f'
	}
	fd, err := syscall.Open(dir+"/file", syscall.O_WRONLY|syscall.O_CREAT, 0o644)
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(fmt.Sprintf("%s/ready.%d", dir, rank), nil, 0o644); err != nil {
		panic(err)
	}
	for r := 0; r < world; r++ {
		for _, err := os.Stat(fmt.Sprintf("%s/ready.%d", dir, r)); err != nil; _, err = os.Stat(fmt.Sprintf("%s/ready.%d", dir, r)) {
			time.Sleep(50 * time.Microsecond)
		}
	}
	start := time.Now()
	for s := 0; s < segs; s++ {
		off := int64(s*world+rank) * t
		n, _, e := syscall.RawSyscall6(syscall.SYS_PWRITE64, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), t, uintptr(off), 0, 0)
		if e != 0 || n != t {
			os.Exit(1)
		}
	}
	syscall.Close(fd)
	fmt.Println(start.UnixNano(), time.Now().UnixNano())
}
EOF
printf 'module floor\n\ngo 1.22\n' >"$work/go/go.mod"
gcc -O2 -pthread -o "$work/floor-c" "$work/floor.c"
(cd "$work/go" && go build -o "$work/floor-go" .)
printf 'phases:\n  - {name: hard-write, op: write, shared: true, xfer_size: 47008, segments: %s}\n' "$segs" >"$work/job.yaml"

mpirun=(mpirun --allow-run-as-root -np 2)
# gibs: GiB/s from the ranks' start and end lines.
gibs() {
	python3 -c 'import sys
rows = [tuple(map(int, l.split())) for l in sys.stdin if l.strip()]
if len(rows) != 2: sys.exit("expected a line from each of 2 ranks")
span = (max(e for _, e in rows) - min(s for s, _ in rows)) / 1e9
print("%.3f" % (2 * int(sys.argv[1]) * 47008 / span / 2**30))' "$segs"
}
run() {
	local d=$mnt/run
	rm -rf "$d" && mkdir -p "$d"
	case $1 in
	c) "${mpirun[@]}" "$work/floor-c" "$d" "$segs" 0 | gibs ;;
	c+tick) "${mpirun[@]}" "$work/floor-c" "$d" "$segs" "$tick" | gibs ;;
	go) "${mpirun[@]}" "$work/floor-go" "$d" "$segs" | gibs ;;
	fsbench)
		"${mpirun[@]}" "$fsbench" bench "$d" -f "$work/job.yaml" -q -o json |
			python3 -c 'import json,sys; print("%.3f" % (json.load(sys.stdin)["phases"][0]["bytes_per_sec"] / 2**30))'
		;;
	ior)
		"${mpirun[@]}" "$ior_dir/src/ior" -w -a POSIX -C -k -t 47008 -b 47008 -s "$segs" -o "$d/file" |
			awk '/^Summary of all tests/ {s=1; next} s && $1=="write" {printf "%.3f\n", $2/1024}'
		;;
	esac
	rm -rf "$d"
}

progs=(c c+tick go fsbench)
[ -n "$ior_dir" ] && progs+=(ior)
out=$work/figures
for r in $(seq 1 "$rounds"); do
	for i in "${!progs[@]}"; do
		p=${progs[$(((i + r) % ${#progs[@]}))]}
		printf '%s\t%s\n' "$p" "$(run "$p")" >>"$out"
	done
done
echo "# $(date -u +%FT%TZ), $(nproc) CPUs, $rounds rounds, $segs transfers a rank, ticker every $tick us"
python3 - "$out" "${progs[@]}" <<'PY'
import sys, statistics, collections
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p, x = line.split()
    v[p].append(float(x))
base = statistics.median(v["c"])
print("| program | median GiB/s | runs | ratio to c |")
print("|---|---|---|---|")
for p in sys.argv[2:]:
    m = statistics.median(v[p])
    print("| %s | %.3f | %s | %.2f |" % (p, m, " ".join("%.2f" % x for x in v[p]), m / base))
PY
