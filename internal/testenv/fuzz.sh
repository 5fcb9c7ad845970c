#!/usr/bin/env bash
# Runs every fuzz target of the module (each `func FuzzX` in a _test.go
# file) for FUZZTIME (default 5s), one after the other, and prints one line
# per target with the inputs it ran. A target that panics or fails stops
# with its output and the failing input (saved under the package's
# testdata/fuzz/), and the script exits non-zero after the others ran.
set -euo pipefail
cd "$(dirname "$0")/../.."
GO="${GO:-go}"
FUZZTIME="${FUZZTIME:-5s}"

failed=0
total=0
t0=$(date +%s)
while IFS=: read -r file name; do
	pkg="./$(dirname "$file")"
	run() { "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 1s "$pkg" 2>&1; }
	out=$(run) && ok=1 || ok=0
	# Go's fuzzer can end a run that found nothing with "context deadline
	# exceeded" when its time runs out while a worker is busy (a loaded
	# machine); that run is done again, once. A real failure names its
	# failing input and is never retried.
	if [ $ok = 0 ] && grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input' <<<"$out"; then
		out=$(run) && ok=1 || ok=0
	fi
	if [ $ok = 1 ]; then
		# A target whose time ran out while its baseline coverage was still
		# being gathered prints no "execs:" line: that is 0, not an error.
		execs=$(grep -o 'execs: [0-9]*' <<<"$out" | tail -1 | cut -d' ' -f2 || true)
		total=$((total + ${execs:-0}))
		printf 'ok    %-22s %-20s %10s execs\n' "$pkg" "$name" "${execs:-0}"
	else
		printf 'FAIL  %-22s %s\n%s\n' "$pkg" "$name" "$out"
		failed=1
	fi
done < <(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' cmd internal pkg | sed 's/:func /:/' | sort)
echo "fuzz: $total executions in all, $(( $(date +%s) - t0 ))s"
exit $failed
