#!/usr/bin/env bash
# history-mongodb.sh: fsbench's change points (E-Divisive with means)
# beside MongoDB's signal-processing-algorithms on the same series. Not run
# in CI: it installs the package from PyPI into a virtual environment.
#
#   bash benchmarks/scripts/history-mongodb.sh [HISTORY...]
#
# Without a HISTORY, synthetic series are made (10 with a 10% step at run
# 20 of 40, 10 without); each HISTORY is a directory fsbench history keeps.
# Both implementations run at p-value 0.01 with 199 permutations and
# segments of at least one run (MongoDB's has no minimum).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fsbench=${FSBENCH:-$root/bin/fsbench}
if [ ! -x "$fsbench" ]; then
	(cd "$root" && go build -o "$work/fsbench" ./cmd/fsbench)
	fsbench=$work/fsbench
fi

venv=${VENV:-$work/venv}
if [ ! -x "$venv/bin/python" ]; then
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q signal-processing-algorithms
fi
echo "signal-processing-algorithms $("$venv/bin/pip" show signal-processing-algorithms | sed -n 's/^Version: //p')"

histories=("$@")
if [ ${#histories[@]} -eq 0 ]; then
	"$venv/bin/python" "$here/history_mongodb.py" synth "$work/synth"
	"$fsbench" history add --history "$work/history" "$work"/synth/*.json 2>/dev/null
	histories=("$work/history")
fi
for h in "${histories[@]}"; do
	echo "== $h"
	"$fsbench" history show --history "$h" --min-segment 1 -o json >"$work/show.json"
	"$venv/bin/python" "$here/history_mongodb.py" compare "$work/show.json" 0.01 199
done
