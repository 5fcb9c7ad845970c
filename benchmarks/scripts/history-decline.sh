#!/usr/bin/env bash
# history-decline.sh: how soon fsbench history finds a slow decline, over
# many real series (as root: history-series.sh's loop device and blkio
# cgroup).
#
#   bash benchmarks/scripts/history-decline.sh OUT [SERIES] [RUNS] [START]
#
# Each of SERIES (10) series is history-series.sh with BASE (3 MiB/s)
# and RAMP (0.004): RUNS (30) runs of one job whose reads are limited to
# BASE, and from run START (20) on to a limit that falls by RAMP x BASE
# more at every run (0.4% a run: about 3% a week at a run a day), into
# OUT/N/step/. Then, as a history growing by a run a day would, each
# series' first K runs are kept in a fresh history for K from START to
# RUNS, and `fsbench history show -o json` is read: the decline is found
# at the first K whose throughput has a change point that lowers it, at
# run START-2 or later. Printed per series: that K and how many runs of
# the decline it took (K - START + 1), or "not found"; then how many
# series found it within 10 runs. SECONDS_PER_RUN (1) is each run's
# length.
set -euo pipefail
out=${1:?usage: history-decline.sh OUT [SERIES] [RUNS] [START]}
series=${2:-10}
runs=${3:-30}
start=${4:-20}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fsbench=${FSBENCH:-$root/bin/fsbench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM # the clean-up runs on these too

for s in $(seq 1 "$series"); do
	BASE=${BASE:-3145728} RAMP=${RAMP:-0.004} FLAT=0 SECONDS_PER_RUN=${SECONDS_PER_RUN:-1} \
		bash "$here/history-series.sh" "$out/$s" "$runs" "$start" >/dev/null
done

# found DIR: the first K at which the decline is found, or 0.
found() {
	local dir=$1 k n
	for k in $(seq "$start" "$runs"); do
		rm -rf "$tmp/h"
		for n in $(seq 1 "$k"); do printf '%s/step/r%02d.json\n' "$dir" "$n"; done |
			xargs "$fsbench" history add --history "$tmp/h" 2>/dev/null
		if "$fsbench" history show --history "$tmp/h" -o json | python3 -c '
import json, sys
first = int(sys.argv[1]) - 2
fig = json.load(sys.stdin)[0]["figures"][0]
sys.exit(0 if any(c["run"] >= first and c["shift_pct"] < 0 for c in fig["changes"] or []) else 1)' "$start"; then
			echo "$k"
			return
		fi
	done
	echo 0
}

within=0
for s in $(seq 1 "$series"); do
	k=$(found "$out/$s")
	load=$(awk '{print $2}' "$out/$s/step/load.txt" | sort -n | sed -n '1p;$p' | paste -sd- -)
	if [ "$k" = 0 ]; then
		echo "series $s (load $load): not found by run $runs"
	else
		echo "series $s (load $load): found with $k runs, $((k - start + 1)) runs into the decline"
		[ $((k - start + 1)) -le 10 ] && within=$((within + 1))
	fi
done
echo "found within 10 runs of its start: $within of $series"
