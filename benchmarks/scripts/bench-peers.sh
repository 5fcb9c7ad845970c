#!/usr/bin/env bash
# Runs fsbench objbench and MinIO's warp on the same S3 operations against one
# local MinIO server on 127.0.0.1: same object sizes, same concurrency,
# unsigned payloads, single-part uploads, no content check on either side.
# Runs alternate (fsbench first, then warp first) and the medians of RUNS
# pairs are shown (RUNS even, so that each tool goes first equally often:
# on put rows the second run of a pair has been about 10% faster, whichever
# tool it was) with the fsbench/warp ratio of throughput and of peak
# client memory (max RSS from /usr/bin/time -v), and each side's client
# CPU time. Each run starts with MinIO's trash empty, the disk synced and,
# as root, the page cache dropped (settle). See benchmarks/records/object-peers.md.
#
# Environment: FSBENCH (default bin/fsbench), WARP (default: warp on PATH,
# then ~/.cache/fsbench-test/bin/warp), MINIO (default: minio on PATH, then
# ~/.cache/fsbench-test/bin/minio), RUNS (pairs, default 6), DURATION (of
# each measurement, default 10s), THREADS (default 4), SMALL (default 4KiB),
# MEDIUM (default 1MiB), BIG (default 16MiB), ONLY (a regular expression:
# only the rows it matches, e.g. ONLY='^(put|get) '), RESULTS_FILE (also
# append every run's figures there, a line each: ROW|TOOL|VALUE|RSS_KIB|CPU_S,
# in the order they ran).
set -euo pipefail
cd "$(dirname "$0")/../.."
. benchmarks/scripts/minio-lib.sh
FSBENCH=${FSBENCH:-bin/fsbench}
RUNS=${RUNS:-6}
[ $((RUNS % 2)) = 0 ] || echo "bench-peers: RUNS=$RUNS is odd: fsbench goes first in one more pair than warp, and the second run of a pair can be the faster one; an even RUNS gives both the same share" >&2
DURATION=${DURATION:-10s}
THREADS=${THREADS:-4}
SMALL=${SMALL:-4KiB}
MEDIUM=${MEDIUM:-1MiB}
BIG=${BIG:-16MiB}
CACHE_BIN=${FSBENCH_TEST_BIN:-$HOME/.cache/fsbench-test/bin}

find_tool() { # NAME VAR -> path or ""
	local v=$2
	if [ -n "$v" ]; then [ -x "$v" ] && echo "$v"; return 0; fi
	command -v "$1" 2>/dev/null || { [ -x "$CACHE_BIN/$1" ] && echo "$CACHE_BIN/$1"; } || true
}
MINIO=$(find_tool minio "${MINIO:-}")
WARP=$(find_tool warp "${WARP:-}")
[ -x "$FSBENCH" ] || { echo "bench-peers: build fsbench first (make build)" >&2; exit 1; }
[ -n "$MINIO" ] || { echo "bench-peers: no MinIO server (make test-deps, or MINIO=path)" >&2; exit 1; }
"$FSBENCH" objbench --help | grep -- --workload >/dev/null || { echo "bench-peers: $FSBENCH has no objbench --workload" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-peers: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
command -v curl >/dev/null && command -v python3 >/dev/null || { echo "bench-peers: needs curl and python3" >&2; exit 1; }
if [ -z "$WARP" ]; then
	echo "bench-peers: warp not found (make peers, put it on PATH or set WARP=path): its rows are skipped" >&2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/fsbench-peers.XXXXXX")
minio_pid=""
cleanup() {
	[ -z "$minio_pid" ] || { kill "$minio_pid" 2>/dev/null; wait "$minio_pid" 2>/dev/null || true; }
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# timed OUT CMD...: runs CMD with stdout to OUT and prints its max RSS in
# KiB and the CPU seconds it used (user and system, the whole run).
timed() {
	local out=$1; shift
	/usr/bin/time -v -o "$work/time" "$@" >"$out" 2>"$work/stderr" || {
		echo "bench-peers: $(basename "$1") failed: $(tail -3 "$work/stderr")" >&2
		return 1
	}
	awk -F': ' '/Maximum resident set size/ { rss = $2 } /(User|System) time \(seconds\)/ { cpu += $2 }
		END { printf "%s|%.2f\n", rss, cpu }' "$work/time"
}

bytes() { python3 -c 'import sys; v=sys.argv[1]; u={"KiB":1<<10,"MiB":1<<20,"GiB":1<<30}; print(int(v[:-3])*u[v[-3:]] if v[-3:] in u else int(v))' "$1"; }

# objects_for OP SIZE: the objects prepared before the timed phase: 1000
# (fewer for big objects, 512 MiB at most), 10000 for delete, which uses
# each once (several seconds of deletes), 5000 for list, five pages of 1000.
objects_for() {
	local b
	case $1 in delete) echo 10000; return ;; list) echo 5000; return ;; esac
	b=$(bytes "$2")
	echo $((b >= 512 << 10 ? (512 << 20) / b : 1000))
}

# unit ROW: MiB/s for moving objects of 1 MiB and more (ranges of MEDIUM,
# sizes up to MEDIUM), else objects/s.
unit() {
	local op=${1%% *} size=${1#* }
	case $op in
	get-range | put-log2) echo MiB/s; return ;;
	put | get) [ "$(bytes "$size")" -ge $((1 << 20)) ] && { echo MiB/s; return; } ;;
	esac
	echo obj/s
}

record() { [ -z "$3" ] || echo "$1|$2|$3|$4" >>"$work/results"; } # ROW TOOL VALUE RSS_KIB|CPU_S (from timed)

# settle: before each run, MinIO's trash is emptied, the last run's writes
# reach the disk (sync) and, as root, the page cache is dropped, so that no
# run pays or profits from the one before it. MinIO moves each deleted
# object into .minio.sys/tmp/.trash of its data directory and removes it
# later in the background (minutes later here: 6000 entries from one
# clean-up were still there a minute on); and without the drop, a run
# finds what the run before it left in memory: the put rows favoured the
# tool that ran second. The server and its data are this script's own.
settle() {
	find "$work/minio/.minio.sys/tmp/.trash" -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null || true
	sync
	[ "$(id -u)" != 0 ] || echo 3 >/proc/sys/vm/drop_caches
}

# --- fsbench ---------------------------------------------------------------

# fsbench_row ROW: objbench's workload of the row's operation and size.
# get-range SIZE reads ranges of MEDIUM at random offsets in objects of
# SIZE; put-log2 SIZE puts objects of sizes log2-uniform from SMALL to SIZE.
fsbench_row() {
	local op=${1%% *} size=${1#* } use extra=() sizes
	sizes=(--obj-size "$size")
	case $op in
	mixed) extra=(--mix get=45,stat=30,put=15,delete=10) ;; # warp's mix
	delete) extra=(--batch 1) ;; # the request warp's --batch 1 sends
	get-range) op=get extra=(--range "$MEDIUM") ;;
	put-log2) op=put sizes=(--obj-size-dist "log2:$SMALL-$size") ;;
	esac
	use=$(ACCESS_KEY=$AK SECRET_KEY=$SK timed "$work/f.json" "$FSBENCH" objbench --storage minio "http://$MINIO_ADDR/fsbench-peers" \
		-p "$THREADS" --duration "$DURATION" --verify=false --json --workload "$op" \
		--objects "$(objects_for "$op" "$size")" "${sizes[@]}" "${extra[@]}") || return 0
	record "$1" fsbench "$(phase_value "$work/f.json" "$op" "$(unit "$1")")" "$use"
}

# phase_value JSON PHASE UNIT: a phase's MiB/s or objects/s (listed
# objects for list).
phase_value() {
	python3 -c 'import json,sys
r=json.load(open(sys.argv[1])); p={x["name"]:x for x in r["phases"]}[sys.argv[2]]
k="items_per_sec" if sys.argv[2]=="list" else "ops_per_sec"
print("%.1f" % (p["bytes_per_sec"]/1048576 if sys.argv[3]=="MiB/s" else p[k]))' "$@"
}

# --- warp ------------------------------------------------------------------

# warp_row ROW: warp's operation on objects of the row's size.
warp_row() {
	local op=${1%% *} size=${1#* } obj=${1#* } use extra=()
	case $op in
	put) ;;
	delete) extra=(--objects "$(objects_for "$op" "$size")" --batch 1) ;;
	list) extra=(--objects "$(objects_for "$op" "$size")" --max-keys 1000) ;;
	get-range) op=get extra=(--objects "$(objects_for get "$size")" --range-size "$MEDIUM") ;;
	put-log2) op=put obj=$SMALL,$size extra=(--obj.randsize) ;; # log2-uniform from SMALL to size
	*) extra=(--objects "$(objects_for "$op" "$size")") ;;
	esac
	use=$(cd "$work" && WARP_ACCESS_KEY=$AK WARP_SECRET_KEY=$SK timed "$work/w.json" "$WARP" "$op" \
		--host "$MINIO_ADDR" --bucket warp-peers --obj.size "$obj" --concurrent "$THREADS" --duration "$DURATION" \
		--disable-multipart --disable-sha256-payload --json --no-color --benchdata "$work/warp" "${extra[@]}") || return 0
	read -r whole steady < <(warp_value "$work/w.json" "$op" "$(unit "$1")")
	record "$1" warp "$whole" "$use"
	record "$1" warp-steady "$steady" "$use"
}

# warp_value JSON OP UNIT: warp's throughput of OP over its whole run
# (operations from the first start to the last end, the span fsbench's
# figure covers), then over the steady part warp reports itself, which
# leaves out each thread's first and last operations and is cut to whole
# seconds (the whole run again when too short to have one).
warp_value() {
	python3 -c 'import json,sys,datetime as d
r=json.load(open(sys.argv[1])); op=sys.argv[2].upper()
a=r["total"] if op=="MIXED" else r["by_op_type"][op]; t=a["throughput"]
p=lambda x: d.datetime.fromisoformat(x[:26].rstrip("Z"))
rate=lambda s, b, o: b/s/1048576 if sys.argv[3]=="MiB/s" else o/s
whole=rate((p(a["end_time"])-p(a["start_time"])).total_seconds(), a["total_bytes"], a["total_objects"])
s=t["measure_duration_millis"]/1000
print("%.1f %.1f" % (whole, rate(s, t["bytes"], t["objects"]) if s else whole))' "$@"
}

ROWS=("put $SMALL" "get $SMALL" "put $MEDIUM" "get $MEDIUM" "put $BIG" "get $BIG"
	"stat $SMALL" "delete $SMALL" "list $SMALL" "mixed $SMALL" "get-range $BIG" "put-log2 $MEDIUM")

if [ -n "${ONLY:-}" ]; then
	mapfile -t ROWS < <(printf '%s\n' "${ROWS[@]}" | grep -E -- "$ONLY" || true)
	[ ${#ROWS[@]} -gt 0 ] || { echo "bench-peers: ONLY=$ONLY matches no row" >&2; exit 1; }
fi

# pair ROW FIRST: the row once on each side, FIRST (fsbench or warp) first.
pair() {
	if [ -z "$WARP" ]; then settle; fsbench_row "$1"; return; fi
	if [ "$2" = fsbench ]; then
		settle; fsbench_row "$1"; settle; warp_row "$1"
	else
		settle; warp_row "$1"; settle; fsbench_row "$1"
	fi
}

# summary: per row, its unit, the medians and the fsbench/warp ratios.
summary() {
	local row units=()
	for row in "${ROWS[@]}"; do units+=("$row|$(unit "$row")"); done
	python3 - "$work/results" "${units[@]}" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    row, tool, v, rss, cpu = line.rstrip("\n").split("|")
    rows.setdefault((row, tool), []).append((float(v), int(rss), float(cpu)))
def med(row, tool, i):
    xs = [x[i] for x in rows.get((row, tool), [])]
    return statistics.median(xs) if xs else None
fmt = "%-16s %6s %10s %10s %6s %11s %6s %7s %8s %6s %6s %8s %6s"
print(fmt % ("operation", "unit", "fsbench", "warp", "ratio", "warp steady", "ratio", "fs MiB", "warp MiB", "ratio",
             "fs CPU", "warp CPU", "ratio"))
for arg in sys.argv[2:]:
    row, unit = arg.split("|")
    f, w, ws = med(row, "fsbench", 0), med(row, "warp", 0), med(row, "warp-steady", 0)
    fm, wm = med(row, "fsbench", 1), med(row, "warp", 1)
    fc, wc = med(row, "fsbench", 2), med(row, "warp", 2)
    s = lambda x, d=1: "-" if x is None else "%.*f" % (d, x)
    r = lambda a, b: "-" if a is None or not b else "%.2f" % (a / b)
    print(fmt % (row, unit, s(f), s(w), r(f, w), s(ws), r(f, ws), s(fm and fm / 1024, 0), s(wm and wm / 1024, 0), r(fm, wm),
                 s(fc), s(wc), r(fc, wc)))
PY
}

start_minio bench-peers
minio_version=$(go version -m "$MINIO" 2>/dev/null | awk '$1 == "mod" && $2 == "github.com/minio/minio" { print $3 }')
echo "bench-peers: MinIO ${minio_version:-$("$MINIO" --version | awk 'NR == 1 { print $3 }')} on $MINIO_ADDR; ${WARP:+warp $("$WARP" --version | awk '{print $3}'), }$RUNS pairs of $DURATION at $THREADS threads; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
: >"$work/results"
for i in $(seq "$RUNS"); do
	first=fsbench
	[ $((i % 2)) = 1 ] || first=warp
	for row in "${ROWS[@]}"; do pair "$row" "$first"; done
	echo "bench-peers: pair $i of $RUNS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
[ -z "${RESULTS_FILE:-}" ] || cat "$work/results" >>"$RESULTS_FILE"
summary
