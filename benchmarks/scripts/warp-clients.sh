#!/usr/bin/env bash
# warp-clients.sh: MinIO's warp in its distributed mode on this machine, to
# set beside many-agents.sh: N `warp client` processes on loopback and one
# `warp get --warp-client=...` coordinating them against a fresh MinIO, RUNS
# times. Per run: exit code, wall, the coordinator's peak RSS and CPU (GNU
# time), the phases' own time (warp's upload as it reports it, and the
# GET's DURATION), the overhead (wall minus them), and the load average. The benchmark is warp's GET of 4 KiB objects,
# one request at a time per client, for DURATION, over 10 objects each
# client uploads first (warp's --objects is per client).
#
#   N=100 RUNS=3 benchmarks/scripts/warp-clients.sh
#
# Environment: WARP (default: warp on PATH, then ~/.cache/fsbench-test/bin/warp;
# `make peers` builds it), MINIO (likewise minio), N, RUNS, DURATION (2s),
# PORT (the first client's, 27000), OUT (where each run's output is kept,
# /tmp/warp-clients).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${FSBENCH_TEST_BIN:-$HOME/.cache/fsbench-test/bin}
WARP=${WARP:-$(command -v warp || echo "$bin/warp")}
MINIO=${MINIO:-$(command -v minio || echo "$bin/minio")}
N=${N:-10} RUNS=${RUNS:-3} DURATION=${DURATION:-2s} PORT=${PORT:-27000}
OUT=${OUT:-/tmp/warp-clients} # each run's output, kept
mkdir -p "$OUT"
[ -x "$WARP" ] || { echo "warp-clients: warp not found (make peers, or WARP=path)" >&2; exit 1; }
[ -x "$MINIO" ] || { echo "warp-clients: minio not found (MINIO=path)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/warp-clients.XXXXXX")
pids=()
minio_pid=
cleanup() {
	for p in "${pids[@]}" $minio_pid; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM # the clean-up runs on these too
# shellcheck source=minio-lib.sh
. "$here/minio-lib.sh"
start_minio warpclients
clients=()
for ((i = 0; i < N; i++)); do
	"$WARP" client "127.0.0.1:$((PORT + i))" >"$work/client-$i.log" 2>&1 &
	pids+=($!)
	clients+=("127.0.0.1:$((PORT + i))")
done
for c in "${clients[@]}"; do
	for _ in $(seq 300); do
		(echo >"/dev/tcp/${c%:*}/${c#*:}") 2>/dev/null && break
		sleep 0.1
	done
done
list=$(IFS=,; echo "${clients[*]}")
ok=0
for ((r = 1; r <= RUNS; r++)); do
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	t0=$(date +%s.%N)
	code=0
	/usr/bin/time -f '%M %U %S' -o "$work/time" timeout 600 "$WARP" get --warp-client "$list" --host "$MINIO_ADDR" \
		--access-key "$AK" --secret-key "$SK" --bucket "warp-clients-$r" --obj.size 4KiB --objects 10 \
		--concurrent 1 --duration "$DURATION" --no-color --benchdata "$work/bench-$r" >"$OUT/out-$r" 2>&1 || code=$?
	wall=$(echo "$(date +%s.%N) - $t0" | bc)
	read -r rss usr sys < <(tail -1 "$work/time") || true
	# The phases' own time: each report's "Ran: 15s" (the upload), and the GET's DURATION.
	phases=$(grep -oE 'Ran: [0-9.]+s' "$OUT/out-$r" | grep -oE '[0-9.]+' | paste -sd+ | bc) || true
	phases=$(echo "${phases:-0} + ${DURATION%s}" | bc)
	printf 'run %d exit %d wall %.1f s phases %.1f s overhead %.1f s rss %d MiB cpu %.2f+%.2f s load %s\n' "$r" "$code" "$wall" "$phases" \
		"$(echo "$wall - $phases" | bc)" $((${rss:-0} / 1024)) "${usr:-0}" "${sys:-0}" "$load"
	[ "$code" = 0 ] && ok=$((ok + 1))
	[ "$code" = 0 ] || tail -5 "$OUT/out-$r"
done
echo "complete: $ok of $RUNS (N=$N warp clients)"
