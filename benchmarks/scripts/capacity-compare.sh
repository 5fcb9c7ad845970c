#!/usr/bin/env bash
# capacity-compare.sh: fsbench's --slo search beside a brute-force sweep of
# fixed open-loop rates and beside fio's latency_target, on one job: O_DIRECT
# 4 KiB random reads, 4 threads, from ext4 on a loop device whose reads a
# blkio cgroup (v1) limits to LIMIT a second (the planted knee), or from DIR
# unthrottled when DIR is given.
#
#   benchmarks/scripts/capacity-compare.sh [DIR]
#
# Settings (environment): OBJ (the objective, default p99<50ms), SEARCHES
# (how many searches, default 5), LIMIT (reads a second, default 200; 0: no
# cgroup), DURATION (each probe and each sweep rate at least, default 2s;
# both are stretched to the samples the percentile needs), RATES (fixed
# rates of the sweep, from 50% to 100% of the maximum, default 20), REPEAT
# (default 1: each probe of a search and each rate of the sweep runs this
# many times and holds only if it holds in all, the search's --repeat), FSBENCH
# (the binary, default
# bin/fsbench), PAIRED (default 0; 1: each search is followed or preceded by
# a sweep of its own, alternately, and judged against it, for storage whose
# answer drifts over minutes). Needs root for the loop device and the
# cgroup, and fio. Prints a markdown report on stdout: the machine, its
# load, each answer and what it cost.
set -euo pipefail

OBJ=${OBJ:-p99<50ms}
SEARCHES=${SEARCHES:-5}
LIMIT=${LIMIT:-200}
DURATION=${DURATION:-2s}
RATES=${RATES:-20}
REPEAT=${REPEAT:-1}
PAIRED=${PAIRED:-0}
FSBENCH=${FSBENCH:-bin/fsbench}
THREADS=4

case "$OBJ" in
p[0-9]*\<*ms) ;;
*) echo "capacity-compare.sh: OBJ must be one percentile in ms, e.g. p99<50ms (fio's latency_target takes one)" >&2; exit 2 ;;
esac
pct=${OBJ%%<*}; pct=${pct#p}
bound_ms=${OBJ#*<}; bound_ms=${bound_ms%ms}
command -v fio >/dev/null || { echo "capacity-compare.sh: fio is not installed" >&2; exit 2; }
[ -x "$FSBENCH" ] || { echo "capacity-compare.sh: no fsbench binary at $FSBENCH (make build)" >&2; exit 2; }

work=$(mktemp -d /var/tmp/capcmp.XXXXXX)
cg=""
mnt=${1:-}
cleanup() {
	if [ -n "$mnt" ]; then rm -f "$mnt/fio.dat"; fi
	if [ -n "$cg" ]; then rmdir "$cg" 2>/dev/null || true; fi
	if mountpoint -q "$work/mnt" 2>/dev/null; then umount "$work/mnt"; fi
	rm -rf "$work"
}
trap 'cleanup' EXIT
if [ -z "$mnt" ]; then
	mkdir "$work/mnt"
	truncate -s 256M "$work/img"
	mkfs.ext4 -q -F "$work/img"
	mount -o loop "$work/img" "$work/mnt"
	mnt=$work/mnt
fi
dev=$(findmnt -n -o MAJ:MIN --target "$mnt" | tr -d ' ')
if [ "$LIMIT" != 0 ]; then
	cg=/sys/fs/cgroup/blkio/capcmp-$$
	mkdir "$cg"
	echo "$dev $LIMIT" >"$cg/blkio.throttle.read_iops_device"
fi
# inlimit runs a command inside the cgroup, when there is one.
inlimit() {
	if [ -n "$cg" ]; then sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"; else "$@"; fi
}
job=(bench "$mnt" --rw randread --xfer-size 4K --file-size 16M --direct --duration "$DURATION" -p "$THREADS" -q --json)
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
now() { date +%s.%N; }

echo "# capacity-compare: $OBJ, O_DIRECT 4 KiB random reads, $THREADS threads"
echo
echo "- date: $(date -u +%FT%TZ), binary: $($FSBENCH --version 2>/dev/null | head -1)"
echo "- machine: $(nproc) CPUs, $(uname -r); target: $mnt (device $dev), read limit ${LIMIT}/s (0: none)"
echo "- load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
# search I: one --slo search; prints its row, sets a (its answer) and secs.
search() {
	local i=$1 t0 t1 row
	t0=$(now)
	inlimit "$FSBENCH" "${job[@]}" --slo "$OBJ" --repeat "$REPEAT" >"$work/slo$i.json"
	t1=$(now)
	a=$(json "$work/slo$i.json" "round(r['capacity']['answer']['ops_per_sec'])")
	secs=$(python3 -c "print(round($t1-$t0,1))")
	row=$(json "$work/slo$i.json" "'%d-%d | %.1f | %d' % (r['capacity']['answer']['low_ops_per_sec'], r['capacity']['answer']['high_ops_per_sec'], r['capacity']['answer'].get('values', {}).get('p$pct', 0)/1e3, len(r['capacity']['steps']))")
	echo "| $i | $a | $row | $secs |"
}
search_head() {
	echo "| search | answer (ops/s) | interval | p$pct at the answer (ms) | steps | seconds |"
	echo "|---|---|---|---|---|---|"
}

# sweep: the closed-loop maximum, then RATES fixed rates; prints its table,
# sets best (the highest rate that held) and secs.
sweep() {
	local t0 t1 max rate dur rows line done p missed holds k n
	t0=$(now)
	inlimit "$FSBENCH" "${job[@]}" >"$work/max.json"
	max=$(json "$work/max.json" "r['phases'][0]['ops_per_sec']")
	echo "closed-loop maximum: $(python3 -c "print(round($max))") ops/s"
	echo
	echo "| rate (ops/s) | done (ops/s) | p$pct (ms) | missed | holds |"
	echo "|---|---|---|---|---|"
	best=0
	for k in $(seq 1 "$RATES"); do
		rate=$(python3 -c "print(round($max*(0.5+0.5*($k-1)/max(1,$RATES-1)),1))")
		# as long as the search's probes: samples enough for the percentile
		dur=$(python3 -c "print('%.2fs' % max(float('${DURATION%s}'), 10/(1-$pct/100)*1.05/$rate))")
		# each run REPEAT times: the worst run's p and misses, and whether it
		# held in every run
		rows=()
		for n in $(seq 1 "$REPEAT"); do
			inlimit "$FSBENCH" "${job[@]}" --duration "$dur" --rate "$rate" >"$work/r$k.json"
			rows+=("$(json "$work/r$k.json" "(lambda p, v: '%.0f|%.1f|%d|%s' % (p['ops_per_sec'], v, p.get('missed', 0), 'yes' if v < $bound_ms and p.get('missed', 0) <= 0.01*(p['ops']+p.get('missed', 0)) else 'no'))(r['phases'][0], r['phases'][0]['latency']['p${pct/./}_us']/1e3)")")
		done
		line=$(printf '%s\n' "${rows[@]}" | python3 -c '
import sys
rows = [l.strip().split("|") for l in sys.stdin if l.strip()]
worst = max(rows, key=lambda r: float(r[1]))
print("|".join([min(rows, key=lambda r: float(r[0]))[0], worst[1], str(max(int(r[2]) for r in rows)), "yes" if all(r[3] == "yes" for r in rows) else "no"]))')
		IFS='|' read -r done p missed holds <<<"$line"
		echo "| $rate | $done | $p | $missed | $holds |"
		if [ "$holds" = yes ]; then best=$rate; fi
	done
	t1=$(now)
	secs=$(python3 -c "print(round($t1-$t0,1))")
	echo
	echo "brute-force answer: the highest rate that held, $best ops/s, in $secs s"
}

answers=()
if [ "$PAIRED" = 1 ]; then
	echo "## $SEARCHES pairs: a --slo search and a sweep of $RATES fixed rates, alternately first"
	pairs=()
	for i in $(seq 1 "$SEARCHES"); do
		echo
		echo "### pair $i"
		echo
		order="search sweep"
		[ $((i % 2)) -eq 0 ] && order="sweep search"
		for side in $order; do
			if [ "$side" = search ]; then
				search_head
				search "$i"
				s_a=$a s_secs=$secs
				answers+=("$a")
			else
				sweep
				w_best=$best w_secs=$secs
			fi
			echo
		done
		pairs+=("$i $s_a $s_secs $w_best $w_secs")
	done
	echo "### the pairs"
	echo
	printf '%s\n' "${pairs[@]}" | python3 -c '
import sys
rows = [l.split() for l in sys.stdin if l.strip()]
print("| pair | search (ops/s) | seconds | sweep (ops/s) | seconds | search / sweep | time ratio |")
print("|---|---|---|---|---|---|---|")
within = 0
for i, a, sa, b, sb in rows:
    a, sa, b, sb = float(a), float(sa), float(b), float(sb)
    r = a / b if b else float("inf")
    within += b > 0 and abs(r - 1) <= 0.05
    print("| %s | %.0f | %.1f | %.0f | %.1f | %s | %.2f |" % (i, a, sa, b, sb, "%.3f" % r if b else "-", sa / sb))
print()
print("within 5%% of the sweep beside it: %d of %d" % (within, len(rows)))'
	best=$w_best
	echo
else
	echo "## fsbench --slo, $SEARCHES searches"
	echo
	search_head
	for i in $(seq 1 "$SEARCHES"); do
		search "$i"
		answers+=("$a")
	done
	echo
	echo "## brute force: $RATES fixed rates from 50% to 100% of the closed-loop maximum, each run $REPEAT times"
	echo
	sweep
	echo
fi
echo "## fio latency_target (closed loop: it searches the queue depth)"
echo
secs=${DURATION%s}
cat >"$work/lt.fio" <<EOF
[lt]
filename=$mnt/fio.dat
size=64M
rw=randread
bs=4k
direct=1
ioengine=libaio
iodepth=64
numjobs=1
latency_target=${bound_ms}ms
latency_window=${secs}s
latency_percentile=$pct
runtime=30
time_based=1
EOF
inlimit fio --output-format=json "$work/lt.fio" >"$work/fio.json" 2>"$work/fio.err" || true
json "$work/fio.json" "(lambda j: 'fio: depth %s, %.0f IOPS, p$pct %.1f ms over the run (completion latency)' % (j.get('latency_depth'), j['read']['iops'], j['read']['clat_ns']['percentile'].get('%.6f' % $pct, 0)/1e6))(r['jobs'][0])" || sed -n 1,5p "$work/fio.err"
echo
echo "## The latency at each answer: fsbench's open loop (last search) beside fio's closed loop"
echo
python3 - "$work/slo$SEARCHES.json" "$work/fio.json" <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))
lat = r["phases"][0]["latency"] if r.get("phases") else {}
try:
    clat = json.load(open(sys.argv[2]))["jobs"][0]["read"]["clat_ns"]["percentile"]
except Exception:
    clat = {}
print("| percentile | fsbench, from each operation's scheduled start (ms) | fio, completion latency (ms) |")
print("|---|---|---|")
for name, key, q in (("p50", "p50_us", 50), ("p90", "p90_us", 90), ("p99", "p99_us", 99), ("p99.9", "p999_us", 99.9)):
    f = lat.get(key)
    c = clat.get("%.6f" % q)
    print("| %s | %s | %s |" % (name, "%.2f" % (f / 1e3) if f is not None else "-", "%.2f" % (c / 1e6) if c is not None else "-"))
PY
echo
echo "- searches' answers: ${answers[*]}; brute force: $best"
echo "- load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
