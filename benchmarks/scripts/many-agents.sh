#!/usr/bin/env bash
# many-agents.sh: N fsbench agents on this machine (PROCS processes of
# N/PROCS agents each, `fsbench agent --instances`), and RUNS runs of one
# coordinator over all of them. Per run: exit code, wall, the phases' own
# time (the result's durations), overhead (wall minus them), the
# coordinator's peak RSS and CPU (GNU time), and the load average.
#
#   N=1000 PROCS=10 RUNS=20 benchmarks/scripts/many-agents.sh [FSBENCH]
#
# Output: one line a run, then the count of runs that completed; logs in
# $OUT (default /tmp/many-agents), the coordinator's stderr with the
# seconds since its start on each line. Needs GNU time, perl, bc and jq.
# PROFILE=1 profiles the coordinator's CPU (cpu-RUN.prof) and the agents'
# processes' (agents-cpu-I.prof, written when the script ends).
set -euo pipefail
BIN=${1:-fsbench}
N=${N:-1000} PROCS=${PROCS:-10} RUNS=${RUNS:-20} PORT=${PORT:-30000}
DURATION=${DURATION:-2s}
# Every agent here would drop the one machine's page cache before each phase.
DROP=${DROP:-never}
OUT=${OUT:-/tmp/many-agents}
mkdir -p "$OUT"
ROOT=$(mktemp -d "$OUT/root.XXXX")
TOKEN=$OUT/token
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TOKEN"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$ROOT"
}
trap cleanup EXIT
trap 'exit 1' INT TERM # the clean-up runs on these too
per=$((N / PROCS))
hosts=()
for ((i = 0; i < PROCS; i++)); do
	first=$((PORT + i * per))
	FSBENCH_CPUPROFILE=${PROFILE:+$OUT/agents-cpu-$i.prof} "$BIN" agent --instances "$per" --listen "127.0.0.1:$first" --token-file "$TOKEN" \
		--allow-root "$ROOT" --max-connections 8 >"$OUT/agents-$i.log" 2>&1 &
	pids+=($!)
	for ((p = first; p < first + per; p++)); do hosts+=("127.0.0.1:$p"); done
done
printf '%s\n' "${hosts[@]}" >"$OUT/hosts"
# Ready when the last port of each process answers.
for ((i = 0; i < PROCS; i++)); do
	last=$((PORT + i * per + per - 1))
	for _ in $(seq 600); do
		(echo >/dev/tcp/127.0.0.1/$last) 2>/dev/null && break
		sleep 0.1
	done
done
# wait_free waits (a minute at most) until no agent (of every tenth) says
# it is busy.
wait_free() {
	local h busy
	for _ in $(seq 120); do
		busy=0
		while read -r h; do
			curl -s -m 5 -H "Authorization: Bearer $(cat "$TOKEN")" "http://$h/v1/info" | grep -q '"busy":true' && busy=1 && break
		done < <(awk 'NR % 10 == 1' "$OUT/hosts") # every tenth
		[ "$busy" = 0 ] && return 0
		sleep 0.5
	done
}
ok=0
for ((r = 1; r <= RUNS; r++)); do
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	t0=$(date +%s.%N)
	set +e
	FSBENCH_CPUPROFILE=${PROFILE:+$OUT/cpu-$r.prof} /usr/bin/time -f '%M %U %S' -o "$OUT/time-$r" timeout 600 "$BIN" bench "$ROOT" --rw stat --files 4 --file-size 4K -p 1 \
		--duration "$DURATION" --drop-caches "$DROP" --hosts-file "$OUT/hosts" --token-file "$TOKEN" --json >"$OUT/result-$r.json" \
		2> >(perl -MTime::HiRes=time -e '$t0 = time; while (<STDIN>) { printf "%6.2f %s", time - $t0, $_ }' >"$OUT/stderr-$r")
	code=$?
	set -e
	t1=$(date +%s.%N)
	wall=$(echo "$t1 - $t0" | bc)
	# Every phase's own time, as its final line says ("PHASE (N hosts): ... in 2.05s").
	phases=$(grep -oE 'hosts\): .* in [0-9.]+s$' "$OUT/stderr-$r" | grep -oE '[0-9.]+s$' | tr -d s | paste -sd+ | bc) || true
	phases=${phases:-0}
	read -r rss usr sys < <(tail -1 "$OUT/time-$r") || true
	rss=${rss##* }
	printf 'run %d exit %s wall %.1f s phases %.1f s overhead %.1f s rss %d MiB cpu %.2f+%.2f s load %s\n' \
		"$r" "$code" "$wall" "$phases" "$(echo "$wall - $phases" | bc)" $((${rss:-0} / 1024)) "${usr:-0}" "${sys:-0}" "$load"
	[ "$code" = 0 ] && ok=$((ok + 1))
	# The next run's preflight wants every agent free again: after a run
	# that lost hosts, theirs give up the job once they miss the pings.
	wait_free
done
echo "complete: $ok of $RUNS (N=$N PROCS=$PROCS)"
