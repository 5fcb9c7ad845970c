#!/usr/bin/env bash
# The probe's resident memory over many rounds (benchmarks/records/probe-memory.md).
#
# probe-rss.sh FSBENCH DIR [PAIRS] [SHORT] [LONG]
#   Peak RSS of fsbench probe after SHORT rounds and after LONG rounds of a
#   tiny bench, in alternating pairs; prints each pair and the medians.
# probe-rss.sh FSBENCH DIR --points [ROUNDS...]
#   One probe of each of three rounds (bench --quick, a 16 MiB big-file
#   bench, an objbench mixed workload on the directory store), each run to
#   the last of ROUNDS (default 20 1000 10000); prints the resident memory,
#   its anonymous part (what the probe allocated, without the binary's
#   code) and its peak so far (VmHWM), in MiB. The resident memory is the
#   one the round's log line gives (rss_mib, anon_mib: read once the round
#   has given its memory back, before the next starts); with a binary whose
#   lines do not have it, it is read from /proc when the line appears,
#   wherever the next round then is. With WINDOW=W (default 1), W rounds
#   from each point on are read and the median and the highest printed.
#   KINDS (default "1 2 3") picks which of the three to run, so that they
#   can run side by side in separate directories. DROP (auto, always or
#   never) is the benches' --drop-caches: never keeps a probe run as root
#   from dropping the whole machine's caches each round.
set -euo pipefail
bin=$1 dir=$2
shift 2

median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

# rss PID: "VmRSS RssAnon VmHWM" of PID in MiB.
rss() { awk '/^VmRSS:/ {r=$2} /^RssAnon:/ {a=$2} /^VmHWM:/ {h=$2} END {printf "%.1f %.1f %.1f\n", r/1024, a/1024, h/1024}' "/proc/$1/status"; }

# points NAME LAST POINTS... -- ROUND ARGS...: one probe of LAST rounds,
# its memory at each of POINTS.
points() {
	local name=$1 last=$2 win=${WINDOW:-1}
	shift 2
	local want=()
	while [ "$1" != -- ]; do want+=("$1"); shift; done
	shift
	{
		# One round more than the last reading, so that the probe is
		# still there when it is read.
		"$bin" probe --interval 1ms --rounds $((last + win)) "$@" 2>&1 >/dev/null &
		echo "pid $!"
		wait $!
	} | {
		read -r _ pid
		local i=0 line n r a h rs=() as=()
		while IFS= read -r line; do
			[[ $line =~ " round="([0-9]+)" result=" ]] || continue
			n=${BASH_REMATCH[1]}
			[[ $line == *" result=pass "* ]] || echo "$name: round $n: $line"
			[ "$i" -lt "${#want[@]}" ] && [ "$n" -ge "${want[$i]}" ] || continue
			read -r r a h < <(rss "$pid" 2>/dev/null || echo "? ? ?")
			if [[ $line =~ " rss_mib="([0-9.]+)" anon_mib="([0-9.]+) ]]; then
				r=${BASH_REMATCH[1]} a=${BASH_REMATCH[2]}
			fi
			rs+=("$r") as+=("$a")
			[ "${#rs[@]}" -ge "$win" ] || continue
			echo "$name: rounds ${want[$i]}-$n: RSS median $(median "${rs[@]}") MiB, highest $(printf '%s\n' "${rs[@]}" | sort -n | tail -1); anonymous median $(median "${as[@]}") MiB; peak $h MiB (load $(cut -d' ' -f1 /proc/loadavg))"
			rs=() as=()
			i=$((i + 1))
		done
	}
}

if [ "${1:-}" = --points ]; then
	shift
	want=("$@")
	[ ${#want[@]} -gt 0 ] || want=(20 1000 10000)
	last=${want[${#want[@]}-1]}
	for k in ${KINDS:-1 2 3}; do
		case $k in
		1) points "bench --quick" "$last" "${want[@]}" -- bench "$dir" --quick ${DROP:+--drop-caches "$DROP"} ;;
		2) points "bench big file 16M" "$last" "${want[@]}" -- bench "$dir" --big-file-size 16M --small-file-count 0 ${DROP:+--drop-caches "$DROP"} ;;
		3) points "objbench mixed (file store)" "$last" "${want[@]}" -- objbench "$dir" --workload mixed --ops 64 --obj-size 64K -p 2 ;;
		esac
	done
	[ -z "$(ls -A "$dir")" ] && echo "nothing left in $dir" || { echo "left in $dir:"; ls -A "$dir"; }
	exit
fi

pairs=${1:-6} short=${2:-100} long=${3:-10000}
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
ms=$(median "${s[@]}") ml=$(median "${l[@]}")
echo "median peak RSS: $short rounds ${ms} KiB, $long rounds ${ml} KiB, ratio $(awk "BEGIN {printf \"%.3f\", $ml/$ms}")"
[ -z "$(ls -A "$dir")" ] && echo "nothing left in $dir" || { echo "left in $dir:"; ls -A "$dir"; }
