#!/usr/bin/env bash
# Regenerate the README: bash docs/examples/run.sh > /tmp/ex.md &&
#   python3 docs/examples/fill.py docs/examples/README.tpl.md /tmp/ex.md > README.md
# Runs the short examples shown on the README's front page and prints each
# as a markdown code block: the command line, then its real output. Run it
# from the repository root after `make build`; paste what it prints.
# Everything it makes lives in a temporary directory removed at the end.
set -euo pipefail
FSBENCH=${FSBENCH:-$PWD/bin/fsbench}
[ -x "$FSBENCH" ] || { echo "run.sh: $FSBENCH not found: run make build first" >&2; exit 1; }
# The examples call plain `fsbench`: the one just built, not one on PATH.
PATH="$(cd "$(dirname "$FSBENCH")" && pwd):$PATH"
[ "$(command -v fsbench)" -ef "$FSBENCH" ] || { echo "run.sh: $FSBENCH must be named fsbench" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir data store

# block CMD...: prints "$ CMD" and its output (stdout and stderr) in a fence.
block() {
	echo '```'
	echo "\$ $*"
	"$@" 2>&1 || true
	echo '```'
	echo
}

block fsbench bench data -p 2 --big-file-size 256M --small-file-count 200 --result-file run1.json -q
block fsbench objbench --storage file ./store/ -p 2 --big-object-size 64M --small-objects 50 --skip-functional-tests -q
block fsbench train data --model resnet50 -p 4 --dataset-files 12 --epochs 4 -q
block fsbench checkpoint data --model llama3-8b -p 4 --size 1G -q
fsbench bench data -p 2 --big-file-size 1G --small-file-count 0 -q >/dev/null &
sleep 1
block fsbench stats data --count 2
wait
fsbench bench data -p 2 --big-file-size 0 --small-file-count 500 --access-log ops.log -q >/dev/null
block fsbench profile ops.log --interval 0
fsbench bench data -p 2 --big-file-size 64M --small-file-count 100 --repeat 5 --result-file before.json -q >/dev/null
fsbench bench data -p 2 --big-file-size 64M --small-file-count 100 --repeat 5 --result-file after.json -q >/dev/null
block fsbench compare before.json after.json --metrics throughput --threshold 10%
fsbench report before.json after.json --html report.html >/dev/null

# Many hosts: two agents on this machine stand in for two client hosts.
head -c 32 /dev/urandom | base64 > token
fsbench agent --listen 127.0.0.1:17791 --token-file token --allow-root "$work" -q &
fsbench agent --listen 127.0.0.1:17792 --token-file token --allow-root "$work" -q &
sleep 1
block fsbench bench data -p 2 --big-file-size 128M --small-file-count 100 --hosts 127.0.0.1:17791,127.0.0.1:17792 --token-file token -q
kill %1 %2 2>/dev/null || true
wait
