#!/usr/bin/env bash
# Peak RSS of fsbench probe after SHORT rounds and after LONG rounds of a tiny
# bench, in alternating pairs; prints each pair and the medians (docs/metrics.md).
# Usage: probe-rss.sh FSBENCH DIR [PAIRS] [SHORT] [LONG]
set -euo pipefail
bin=$1 dir=$2 pairs=${3:-6} short=${4:-100} long=${5:-10000}
run() {
	/usr/bin/time -f "%M" "$bin" probe --interval 1ms --rounds "$1" \
		bench "$dir" --rw write --file-size 64K --xfer-size 16K --ops 8 -p 2 2>&1 >/dev/null | tail -1
}
s=() l=()
for i in $(seq "$pairs"); do
	a=$(run "$short") b=$(run "$long")
	s+=("$a") l+=("$b")
	echo "pair $i: $short rounds ${a} KiB, $long rounds ${b} KiB (load $(cut -d' ' -f1 /proc/loadavg))"
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
ms=$(median "${s[@]}") ml=$(median "${l[@]}")
echo "median peak RSS: $short rounds ${ms} KiB, $long rounds ${ml} KiB, ratio $(awk "BEGIN {printf \"%.3f\", $ml/$ms}")"
[ -z "$(ls -A "$dir")" ] && echo "nothing left in $dir" || { echo "left in $dir:"; ls -A "$dir"; }
