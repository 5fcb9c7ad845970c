#!/usr/bin/env bash
# Compares fsbench binaries with each other and with fio's io_uring engine:
# 4 KiB random reads (RW, BS), O_DIRECT, one thread, on one kept file of
# 256 MiB in DIR/uring-compare (uring-compare.sh's), at each of DEPTHS.
# Each round runs every tool once, RUNTIME seconds, in an order that
# rotates from round to round; RUNS rounds. Per tool: the median IOPS, the
# runs' IOPS, and CPU (user+system, getrusage) and voluntary context
# switches per I/O of the whole process.
#
# Usage: uring-ab.sh BINARY... (e.g. the binary before a change and after)
# Environment: DIR (default /var/tmp/ucmp), DEPTHS (default "16 32"), RUNS
# (default 6), RUNTIME (default 4), RW (default randread), BS (default 4K).
set -euo pipefail
DEPTHS=${DEPTHS:-"16 32"}
RUNS=${RUNS:-6}
RUNTIME=${RUNTIME:-4}
DIR=${DIR:-/var/tmp/ucmp}
RW=${RW:-randread}
BS=${BS:-4K}
SIZE=256M
[ $# -gt 0 ] || { echo "usage: uring-ab.sh BINARY..." >&2; exit 2; }
command -v fio >/dev/null || { echo "uring-ab: fio is not installed (make test-deps)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$DIR"
args() {
	echo bench "$DIR" -q --json --drop-caches never --depth 0 --width 1 --files 1 --file-size $SIZE \
		--tree-dir uring-compare --rw "$RW" --xfer-size "$BS" --direct
}
# shellcheck disable=SC2046
"$1" $(args) --ops 1 >/dev/null

# run TOOL DEPTH -> "iops cpu_us_per_io csw_per_io"
run() {
	if [ "$1" = fio ]; then
		/usr/bin/time -o "$tmp/t" -f "%U %S %w" fio --name=job --filename="$DIR/uring-compare/f1" --ioengine=io_uring \
			--iodepth="$2" --rw="$RW" --bs="$BS" --direct=1 --size=$SIZE --time_based --runtime="$RUNTIME" \
			--invalidate=0 --output-format=json >"$tmp/o" 2>/dev/null
		python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; j=j["read"] if j["read"]["total_ios"] else j["write"]
u,s,w=open(sys.argv[2]).read().split()[-3:]; n=max(j["total_ios"],1)
print("%.0f %.2f %.4f" % (j["iops"], (float(u)+float(s))*1e6/n, float(w)/n))' "$tmp/o" "$tmp/t"
		return
	fi
	# shellcheck disable=SC2046
	/usr/bin/time -o "$tmp/t" -f "%U %S %w" "$1" $(args) --duration "${RUNTIME}s" --ioengine io_uring --iodepth "$2" >"$tmp/o"
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["phases"][-1]; u,s,w=open(sys.argv[2]).read().split()[-3:]
print("%.0f %.2f %.4f" % (p["ops_per_sec"], (float(u)+float(s))*1e6/p["ops"], float(w)/p["ops"]))' "$tmp/o" "$tmp/t"
}

tools=("$@" fio)
n=${#tools[@]}
for d in $DEPTHS; do
	l0=$(cut -d' ' -f1 /proc/loadavg)
	res=()
	for r in $(seq "$RUNS"); do
		for k in $(seq 0 $((n - 1))); do
			i=$(((k + r) % n))
			res[i]+="$(run "${tools[i]}" "$d") "
		done
	done
	echo "depth $d, load (1 min) $l0/$(cut -d' ' -f1 /proc/loadavg)"
	for i in $(seq 0 $((n - 1))); do
		python3 -c 'import sys,statistics as st; v=[float(x) for x in sys.argv[2].split()]; i,c,w=v[0::3],v[1::3],v[2::3]
print("  %-24s IOPS %7.0f [%s]  CPU us/IO %.2f  cs/IO %.4f" % (sys.argv[1], st.median(i), " ".join("%.0f" % x for x in i), st.median(c), st.median(w)))' \
			"${tools[i]}" "${res[i]}"
	done
done
