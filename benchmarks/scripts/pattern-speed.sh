#!/usr/bin/env bash
# The data generator's speed on one core, before and after a change, and
# with compressible and duplicate data: internal/pattern's Go benchmarks
# of a writer's stream (BenchmarkStreamGiB, 1 MiB blocks of a big file),
# Fill of 1 MiB and of 4 KiB (small files and objects), from the test
# binary of BASE (a commit; default the one before --compress-ratio) and
# of the work tree, run in turns, RUNS rounds of BENCHTIME each, with
# -cpu 1. Prints benchstat's comparison of the plain generator (the old
# binary's StreamGiB, Fill1MiB and Fill4KiB against BenchmarkShaped/.../plain)
# and the new binary's figures with ratios.
#
# Usage: pattern-speed.sh [BASE]
# Environment: RUNS (default 8), BENCHTIME (default 1s).
set -euo pipefail
BASE=${1:-345ef91}
RUNS=${RUNS:-8}
BENCHTIME=${BENCHTIME:-1s}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/base"
git archive "$BASE" go.mod go.sum internal/pattern internal/sysio | tar -x -C "$tmp/base"
(cd "$tmp/base" && go test -c -o "$tmp/old.test" ./internal/pattern)
go test -c -o "$tmp/new.test" ./internal/pattern
for _ in $(seq "$RUNS"); do
	"$tmp/old.test" -test.run '^$' -test.bench 'BenchmarkStreamGiB|BenchmarkFill1MiB$|BenchmarkFill4KiB$' \
		-test.cpu 1 -test.benchtime "$BENCHTIME" | grep '^Benchmark' >>"$tmp/old.txt"
	"$tmp/new.test" -test.run '^$' -test.bench 'BenchmarkShaped' -test.cpu 1 -test.benchtime "$BENCHTIME" |
		grep '^Benchmark' >>"$tmp/shaped.txt"
done
# The plain generator, before and after, under the old benchmarks' names.
sed -n 's|^BenchmarkShaped/\([A-Za-z0-9]*\)/plain|Benchmark\1|p' "$tmp/shaped.txt" >"$tmp/new.txt"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
go run golang.org/x/perf/cmd/benchstat "$tmp/old.txt" "$tmp/new.txt"
echo
go run golang.org/x/perf/cmd/benchstat "$tmp/shaped.txt"
