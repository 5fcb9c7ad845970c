#!/usr/bin/env bash
# What --journal costs a writer: `fsbench bench --rw write` at 4 KiB
# transfers (BS), THREADS threads, FILES files of 64 MiB each in a new
# directory under DIR, RUNTIME seconds, with and without --journal (both
# with --keep, so the runs differ in the journal alone), alternating
# within each of RUNS rounds, the first of the pair rotating. Per side:
# the runs' write MiB/s and the process's CPU seconds (user+system) per
# GiB written, and their medians; then the ratios of the medians (journal
# / none) and the journal's size per GiB written. On a busy machine the
# MiB/s say more of the other work than of the journal; the CPU per GiB
# is what the journal adds to the writer.
#
# With WITH set (e.g. WITH='--compress-ratio 2'), the second side runs
# with those flags instead of --journal: what any writer's flag costs,
# measured the same way (the side is still named "journal" below).
#
# BOTH adds flags to both sides (BOTH=--direct: the writes go to the
# device, not to the page cache).
#
# JDIR is where the journals go (default a new directory under /tmp, on
# the root file system here): a journal on DIR's own file system shares
# its fsyncs' commits with the writer's data, one on a tmpfs does not.
#
# Usage: journal-cost.sh BINARY
# Environment: WITH, BOTH, DIR (default /var/tmp/jcost; a tmpfs measures the
# journal's CPU cost, a disk what a user meets), RUNS (default 6),
# RUNTIME (default 5), THREADS (default 2), FILES (default 4), BS
# (default 4K).
set -euo pipefail
RUNS=${RUNS:-6}
RUNTIME=${RUNTIME:-5}
THREADS=${THREADS:-2}
FILES=${FILES:-4}
BS=${BS:-4K}
DIR=${DIR:-/var/tmp/jcost}
[ $# -eq 1 ] || { echo "usage: journal-cost.sh BINARY" >&2; exit 2; }
bin=$1
tmp=$(mktemp -d)
jdir=${JDIR:-$tmp}
mkdir -p "$jdir"
trap 'rm -rf "$tmp" "$DIR"/run.* "$jdir"/*.journal' EXIT
mkdir -p "$DIR"
one() { # one SIDE ROUND: prints MiB/s, CPU s per GiB and, with a journal, its bytes per GiB written
	local side=$1 round=$2 run="$DIR/run.$1.$2" extra=() both=()
	read -r -a both <<<"${BOTH:-}"
	mkdir -p "$run"
	if [ "$side" = journal ] && [ -n "${WITH:-}" ]; then
		read -r -a extra <<<"$WITH"
	elif [ "$side" = journal ]; then
		extra=(--journal "$jdir/$round.journal")
	fi
	"$bin" bench "$run" -q --json --drop-caches never --rw write --xfer-size "$BS" --file-size 64M \
		--files "$FILES" -p "$THREADS" --duration "${RUNTIME}s" --keep "${both[@]}" "${extra[@]}" >"$tmp/out.json"
	python3 - "$tmp/out.json" "$jdir/$round.journal" "$side" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
p, u = r["phases"][0], r["usage"]
gib = p["bytes"] / 2**30
size = os.path.getsize(sys.argv[2]) if os.path.exists(sys.argv[2]) else 0
print("%.1f %.4f %.0f" % (p["bytes_per_sec"] / 2**20, u["cpu_percent"] / 100 * u["seconds"] / gib, size / gib))
PY
	rm -rf "$run"
}
for r in $(seq 1 "$RUNS"); do
	order="none journal"
	[ $((r % 2)) -eq 0 ] && order="journal none"
	for side in $order; do
		read -r mibs cpu per <<<"$(one "$side" "$r")"
		echo "$side $mibs $cpu $per" >>"$tmp/all"
	done
done
python3 - "$tmp/all" <<'PY'
import statistics, sys
runs = {"none": [], "journal": []}
cpus = {"none": [], "journal": []}
per = []
for line in open(sys.argv[1]):
    side, mibs, cpu, p = line.split()
    runs[side].append(float(mibs))
    cpus[side].append(float(cpu))
    if side == "journal":
        per.append(float(p))
for side, v in runs.items():
    print("%-8s median %8.1f MiB/s  runs %s" % (side, statistics.median(v), " ".join("%.1f" % x for x in v)))
    c = cpus[side]
    print("%-8s median %8.3f CPU s/GiB  runs %s" % (side, statistics.median(c), " ".join("%.3f" % x for x in c)))
med = lambda d, s: statistics.median(d[s])
print("ratio journal/none of the medians: MiB/s %.3f, CPU s/GiB %.3f" % (med(runs, "journal") / med(runs, "none"), med(cpus, "journal") / med(cpus, "none")))
print("journal size: %.1f MiB per GiB written (median)" % (statistics.median(per) / 2**20))
PY
