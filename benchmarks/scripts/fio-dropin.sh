#!/usr/bin/env bash
# Runs fio's own command lines through fio and through `fsbench fio`, the
# same line on the same directory, alternating, and prints for each line
# the medians of both sides' IOPS, bandwidth and CPU time per I/O (user
# plus system seconds of the whole process over its I/Os), their ratio
# fsbench/fio with a 95% interval, and in how many pairs fsbench was
# ahead. The lines are the four of JuiceFS's performance guide, at SIZE a
# job, and a 4 KiB random read with O_DIRECT.
#
# Usage: fio-dropin.sh [DIR] [PAIRS] (default: a new directory under the
# repository, which is on the machine's disk; 6 pairs).
# Environment: SIZE (per job, default 256m), JOBS (numjobs, default 2).
set -euo pipefail
cd "$(dirname "$0")/../.."
FSBENCH=${FSBENCH:-bin/fsbench}
SIZE=${SIZE:-256m}
JOBS=${JOBS:-2}
PAIRS=${2:-6}
bad() { echo "fio-dropin.sh: $*" >&2; exit 2; }
case $PAIRS in '' | *[!0-9]* | 0*) bad "PAIRS is a count of pairs, not $PAIRS" ;; esac
case $JOBS in '' | *[!0-9]* | 0*) bad "JOBS is a count of jobs, not $JOBS" ;; esac
[[ $SIZE =~ ^[1-9][0-9]*[kmg]?$ ]] || bad "SIZE is a size as fio writes it (256m, 1g), not $SIZE"
command -v fio >/dev/null || { echo "fio-dropin.sh: fio is not installed (make test-deps)" >&2; exit 1; }
[ -x "$FSBENCH" ] || { echo "fio-dropin.sh: build fsbench first (make build)" >&2; exit 1; }
# shellcheck source=benchmarks/scripts/pairs.sh
source benchmarks/scripts/pairs.sh

base=${1:-}
if [ -z "$base" ]; then
	base=$(mktemp -d "$PWD/.fio-dropin.XXXXXX")
fi
work=$(mktemp -d "$base/run.XXXXXX")
out=$(mktemp)
trap 'rm -rf "$work" "$out"; [ -n "${1:-}" ] || rm -rf "$base"' EXIT

drop() { sync; if [ "$(id -u)" -eq 0 ]; then echo 3 >/proc/sys/vm/drop_caches; fi; }

# line NAME: the fio options of the line NAME, on directory $2.
line() {
	local rw=$1 bs=1m
	case $rw in 4k-randread) rw=randread bs=4k ;; esac
	echo "--name=jfs-test --directory=$2 --ioengine=libaio --rw=$rw --bs=$bs --size=$SIZE --numjobs=$JOBS --direct=1 --group_reporting"
}

# measure TOOL NAME CMD...: runs CMD (its JSON result on stdout) under
# time, and prints TOOL's lines for pair_table: IOPS, MiB/s, CPU us/IO.
measure() {
	local tool=$1 name=$2 times json
	shift 2
	times=$(mktemp) json=$(mktemp)
	/usr/bin/time -f '%U %S' -o "$times" "$@" >"$json" 2>/dev/null
	python3 - "$tool" "$name" "$times" "$json" <<'PY'
import json, sys
tool, name, times, result = sys.argv[1:5]
cpu = sum(float(x) for x in open(times).read().split()[-2:])
r = json.load(open(result))
if tool == "fio":
    j = r["jobs"][0]
    d = j["read"] if j["read"]["io_bytes"] else j["write"]
    iops, bw, ios = d["iops"], d["bw_bytes"], d["total_ios"]
else:
    ps = [p for p in r["phases"] if p["ops"]]
    iops = sum(p["ops_per_sec"] for p in ps)
    bw = sum(p["bytes_per_sec"] for p in ps)
    ios = sum(p["ops"] for p in ps)
for phase, v in (("IOPS in kIOPS", iops / 1e3), ("bandwidth in MiB/s", bw / 1048576), ("CPU in us/IO", cpu * 1e6 / ios)):
    print("\t".join([name, tool, phase, "%.4f" % v]))
PY
	rm -f "$times" "$json"
}

side_fio() {
	local d="$work/fio"
	mkdir -p "$d"
	drop
	# shellcheck disable=SC2046 # the line's options are words
	measure fio "$1" fio $(line "$1" "$d") --output-format=json
	rm -rf "$d"
}

side_fsbench() {
	local d="$work/fsbench"
	mkdir -p "$d"
	drop
	# shellcheck disable=SC2046
	measure fsbench "$1" "$FSBENCH" fio $(line "$1" "$d") --json -q
	rm -rf "$d"
}

echo "$(fio --version) vs fsbench $("$FSBENCH" --version | awk '{print $2}') on $(df -T "$work" | awk 'NR==2{print $2" "$1}'), --size=$SIZE --numjobs=$JOBS, $PAIRS pairs alternating"
for name in write read randwrite randread 4k-randread; do
	alternate "$PAIRS" "$out" side_fio side_fsbench "$name"
done
pair_table "$out" fio fio line
