#!/usr/bin/env bash
# fio-examples.sh FIO_SRC [DIR]: run each job file of fio's examples/
# folder through fsbench fio and, when fsbench takes it, through fio
# itself, sizes scaled down, and print what each moved (bytes and
# operations, from fio's --output-format=json and fsbench's --json), or
# fsbench's one-line refusal. A file fsbench refuses is never given to fio
# (several name devices such as /dev/sda).
#
# FIO_SRC is a fio checkout: a work tree with examples/, or a git directory
# (examples are read with git show HEAD:examples/NAME). DIR is where the
# runs happen (default: a new directory under /tmp, removed at the end).
#
# Environment: FSBENCH (default the repository's bin/fsbench), FIO (default fio), SIZE
# (size= and filesize= of every job, default 16m), RUNTIME (runtime= of
# every time_based job, default 1; a runtime without time_based is kept),
# LOOPS (loops= of every job that has it, default 2), ONLY (a
# space-separated list of example names).
set -euo pipefail

src=${1:?usage: fio-examples.sh FIO_SRC [DIR]}
FSBENCH=${FSBENCH:-$(cd "$(dirname "$0")/../.." && pwd)/bin/fsbench}
FIO=${FIO:-fio}
SIZE=${SIZE:-16m}
RUNTIME=${RUNTIME:-1}
LOOPS=${LOOPS:-2}
[ -x "$FSBENCH" ] || { echo "fio-examples.sh: $FSBENCH not found: build fsbench first (make build)" >&2; exit 2; }
command -v "$FIO" >/dev/null || { echo "fio-examples.sh: $FIO not found" >&2; exit 2; }
command -v python3 >/dev/null || { echo "fio-examples.sh: python3 not found" >&2; exit 2; }

own=""
if [ -n "${2:-}" ]; then
	work=$2
else
	work=$(mktemp -d /tmp/fio-examples.XXXXXX)
	own=$work
fi
trap '[ -n "$own" ] && rm -rf "$own"' EXIT

# list and show read the examples from a work tree or a git directory.
if [ -d "$src/examples" ]; then
	list() { (cd "$src/examples" && ls -1 ./*.fio | sed 's|^\./||'); }
	show() { cat "$src/examples/$1"; }
else
	list() { git -C "$src" ls-tree --name-only HEAD examples/ | sed -n 's|^examples/\(.*\.fio\)$|\1|p'; }
	show() { git -C "$src" show "HEAD:examples/$1"; }
fi

# scale rewrites a job file to run small in $1: sizes, run times, the
# directory, and absolute file names (outside /dev) to names in it.
scale() {
	local text runtime=""
	text=$(cat)
	# A runtime without time_based only ends the pass early: kept, so that
	# both tools do the whole (smaller) pass.
	if grep -Eq '^[[:space:]]*time_based([[:space:]]*=[[:space:]]*1)?[[:space:]]*([;#].*)?$' <<<"$text"; then
		runtime="s/^([[:space:]]*)(runtime|timeout)[[:space:]]*=.*/\1\2=$RUNTIME/"
	fi
	sed -E \
		-e "s/^([[:space:]]*)(size|filesize)[[:space:]]*=.*/\1\2=$SIZE/" \
		-e "${runtime:-s/^\$//}" \
		-e "s/^([[:space:]]*)ramp_time[[:space:]]*=.*/\1ramp_time=0/" \
		-e "s/^([[:space:]]*)loops[[:space:]]*=.*/\1loops=$LOOPS/" \
		-e "s|^([[:space:]]*)directory[[:space:]]*=.*|\1directory=$1|" \
		-e "s|^([[:space:]]*)filename[[:space:]]*=[[:space:]]*/([^d][^/]*/)*([^/]+)$|\1filename=\3|" <<<"$text"
}

# sum_fio and sum_fsbench print "BYTES OPS" of a JSON result on stdin.
sum_fio() {
	python3 -c '
import json, sys
t = sys.stdin.read()
d = json.loads(t[t.index("{"):])
b = o = 0
for j in d["jobs"]:
    for k in ("read", "write"):
        b += j[k]["io_bytes"]; o += j[k]["total_ios"]
print(b, o)'
}
sum_fsbench() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(p["bytes"] for p in d["phases"]), sum(p["ops"] for p in d["phases"]))'
}

printf '%-34s %-24s %-24s %s\n' EXAMPLE "FIO BYTES/OPS" "FSBENCH BYTES/OPS" RESULT
same=0 refused=0 differ=0 timed=0
for name in $(list); do
	if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" ${name%.fio} "* ]]; then
		continue
	fi
	d=$work/${name%.fio}
	rm -rf "$d"
	mkdir -p "$d/fio" "$d/fsbench"
	show "$name" | scale "$d/fsbench" >"$d/fsbench.fio"
	show "$name" | scale "$d/fio" >"$d/fio.fio"
	set +e
	out=$(cd "$d/fsbench" && "$FSBENCH" fio "$d/fsbench.fio" --json -q 2>"$d/fsbench.err")
	rc=$?
	set -e
	if [ $rc -ne 0 ]; then
		msg=$(head -1 "$d/fsbench.err" | sed -E "s|^fsbench: ||; s| \(see 'fsbench fio --help'\)||; s|$d/fsbench.fio|$name|")
		printf '%-34s %-24s %-24s %s\n' "$name" - - "refused: $msg"
		refused=$((refused + 1))
		continue
	fi
	ours=$(sum_fsbench <<<"$out")
	theirs=$(cd "$d/fio" && "$FIO" "$d/fio.fio" --output-format=json 2>"$d/fio.err" | sum_fio) || theirs="fio failed"
	if grep -Eq '^[[:space:]]*time_based([[:space:]]*=[[:space:]]*1)?[[:space:]]*([;#].*)?$' "$d/fio.fio"; then
		verdict="time-based (${RUNTIME}s): bytes follow speed"
		timed=$((timed + 1))
	elif [ "$ours" = "$theirs" ]; then
		verdict=same
		same=$((same + 1))
	else
		verdict=DIFFERS
		differ=$((differ + 1))
	fi
	printf '%-34s %-24s %-24s %s\n' "$name" "${theirs/ //}" "${ours/ //}" "$verdict"
	rm -rf "$d/fio" "$d/fsbench"
done
echo "same: $same, time-based: $timed, refused: $refused, differ: $differ"
[ "$differ" -eq 0 ]
