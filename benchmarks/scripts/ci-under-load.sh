#!/usr/bin/env bash
# ci-under-load.sh: the whole test suite (.ci/run) on a fresh clone, RUNS
# times in a row, each beside HOGS busy loops that keep every CPU wanted
# (benchmarks/records/ci-under-load.md).
#
#   benchmarks/scripts/ci-under-load.sh [REPO] [RUNS]
#
# REPO (default: the repository this script is in) is cloned afresh for
# each run, at its HEAD, into a new directory under /tmp that is removed
# afterwards (so a run takes the commits made while the one before it ran);
# the run's log is kept as $OUT/run-N.log. Settings
# (environment): HOGS (busy loops, default 2), OUT (where the logs go,
# default a new directory under /var/tmp), LIMIT (seconds a run may take
# before it counts as failed, default 2700: 45 minutes). Prints a markdown
# table on stdout, a row a run (its commit, exit code, wall time and the
# load average at its end), then how many passed; exits 1 when any failed.
set -euo pipefail
repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
runs=${2:-10}
HOGS=${HOGS:-2}
LIMIT=${LIMIT:-2700}
for v in "RUNS=$runs" "HOGS=$HOGS" "LIMIT=$LIMIT"; do
	case ${v#*=} in
	'' | *[!0-9]* | 0[0-9]*) echo "ci-under-load.sh: ${v%%=*} is a whole number, not ${v#*=}" >&2; exit 2 ;;
	esac
done
for v in "RUNS=$runs" "LIMIT=$LIMIT"; do
	[ "${v#*=}" -gt 0 ] || { echo "ci-under-load.sh: ${v%%=*} is at least 1, not ${v#*=}" >&2; exit 2; }
done
[ -d "$repo/.git" ] || { echo "ci-under-load.sh: $repo is not a git repository" >&2; exit 2; }
OUT=${OUT:-$(mktemp -d /var/tmp/ci-under-load.XXXXXX)}
mkdir -p "$OUT"

hogs=() clone="" run=""
# stop ends the busy loops and, when the run is stopped early, the run's
# whole process group (setsid below), then removes its clone.
stop() {
	for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
	hogs=()
	if [ -n "$run" ] && kill -TERM -- "-$run" 2>/dev/null; then
		# up to 10 s for the group to go, then whatever is left is killed
		for _ in $(seq 100); do
			kill -0 -- "-$run" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL -- "-$run" 2>/dev/null || true
	fi
	run=""
	if [ -n "$clone" ]; then rm -rf "$clone"; fi
}
trap stop EXIT
trap 'stop; exit 130' INT TERM

echo "# .ci/run under load: $runs runs beside $HOGS busy loops"
echo
echo "- repository: $repo at $(git -C "$repo" rev-parse --short HEAD)"
echo "- machine: $(nproc) CPUs, $(uname -r); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- logs: $OUT"
echo
echo "| run | commit | exit | minutes | load average at the end |"
echo "|---|---|---|---|---|"
passed=0
for i in $(seq 1 "$runs"); do
	clone=$(mktemp -d /tmp/ci-under-load.XXXXXX)
	git clone -q "$repo" "$clone/repo"
	commit=$(git -C "$clone/repo" rev-parse --short HEAD)
	for _ in $(seq 1 "$HOGS"); do
		(while :; do :; done) &
		hogs+=($!)
	done
	t0=$(date +%s)
	# In a process group of its own, waited for in the background, so
	# that Ctrl-C or SIGTERM stops the run at once, and all of it.
	setsid bash -c 'cd "$1" && CI=true exec timeout -k 60 "$2" bash .ci/run' _ "$clone/repo" "$LIMIT" >"$OUT/run-$i.log" 2>&1 &
	run=$!
	set +e
	wait "$run"
	rc=$?
	set -e
	run=""
	t1=$(date +%s)
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	stop
	clone=""
	[ "$rc" -eq 0 ] && passed=$((passed + 1))
	echo "| $i | $commit | $rc | $(awk "BEGIN {printf \"%.1f\", ($t1-$t0)/60}") | $load |"
done
echo
echo "passed: $passed of $runs"
[ "$passed" -eq "$runs" ]
