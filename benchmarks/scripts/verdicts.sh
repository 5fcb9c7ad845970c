#!/usr/bin/env bash
# How often `fsbench compare` cries wolf, and how often it misses a real
# slowdown: the figures of docs/statistics.md.
#
#   verdicts.sh false-alarms DIR        PAIRS pairs of the same bench job on DIR
#   verdicts.sh false-alarms minio      the same with objbench, on a fresh MinIO
#   verdicts.sh false-alarms ext4       the same on ext4 over a loop device (as
#                                       root; its image in IMG_DIR, /var/tmp)
#   verdicts.sh slowdown DIR|ext4|minio the same pairs, the NEW side slowed by
#                                       stopping the storage's process for
#                                       FREEZE (0.3) of the time (freeze.py):
#                                       each should exit 3 at --threshold
#   verdicts.sh capped                  bench --direct on ext4 over a loop
#                                       device capped by a blkio limit at
#                                       CAP_BPS for OLD, CAP_SLOW of it for
#                                       NEW: each should exit 3 (as root)
#   verdicts.sh rated DIR               one write phase on DIR, the NEW side
#                                       held to RATE_SLOW (0.7) of a probe's
#                                       rate (--rate): each should exit 3
#   verdicts.sh recompare DIR           compares again the pairs KEEP kept
#   verdicts.sh detect                  bench on ext4 over a loop device, the NEW
#                                       side slowed by a blkio throttle (as root)
#   verdicts.sh quick DIR               RUNS runs of each command's --quick on DIR
#                                       with the expectations its docs show:
#                                       how often each is judged (pass or fail),
#                                       not too short to judge
#   verdicts.sh quick-slow [CMD...]     RUNS runs of each command's --quick on
#                                       ext4 over a loop device whose reads
#                                       (and O_DIRECT writes) a blkio limit of
#                                       SLOW_BPS slows, with expectations
#                                       it cannot meet: how often each exits 3
#                                       (as root)
#
# Each pair is two results of the same job, each of REPEAT runs (--repeat;
# 1 compares single runs), compared at default settings and with
# --threshold THRESHOLD. False alarms: every pair should exit 0 with no
# regression. Detection: the NEW side runs in a blkio cgroup whose read and
# write limits are SLOW (0.82) of the OLD side's median bytes/s, so its
# big-file phases are about 18% slower; each should be flagged (worse or a
# regression). Runs alternate sides so that run order favours neither.
#
# Environment: FSBENCH (default bin/fsbench), PAIRS (20), REPEAT (5),
# KEEP (a directory to keep each pair's results in, as N-old.json and
# N-new.json, for recompare), FREEZE (0.3: slowdown's share of the time
# stopped), CAP_BPS (104857600: capped's limit of OLD, bytes/s), CAP_SLOW
# (0.7: NEW's limit in capped, a share of CAP_BPS), RATE_SLOW (0.7: rated's
# share of the probe's rate), RATE_FROM (old: rated holds NEW to a share of
# OLD's own median, OLD first, instead of a probe's),
# THRESHOLD (10%), SLOW (0.82), BIG (256M: detect's file per thread; a blkio
# limit lets a phase of well under a second through in bursts; capped's
# 64M, rated's 128M), IMG_DIR
# (/dev/shm: where detect's and capped's disk image lives; /var/tmp for
# quick-slow and false-alarms ext4),
# MINIO (the server, for minio), JOB (extra flags of the job), RUNS (10:
# quick's and quick-slow's runs a command), SLOW_BPS (20971520: quick-slow's
# limit, bytes/s), CLEAN_RUNS (1: quick-slow's unthrottled runs a command).
set -euo pipefail

FSBENCH=${FSBENCH:-bin/fsbench}
PAIRS=${PAIRS:-20}
REPEAT=${REPEAT:-5}
THRESHOLD=${THRESHOLD:-10%}
SLOW=${SLOW:-0.82}
MINIO=${MINIO:-$HOME/.cache/fsbench-test/bin/minio}
mode=${1:-}
# quick-slow's settings are checked before anything is made.
if [ "$mode" = quick-slow ]; then
	RUNS=${RUNS:-10} SLOW_BPS=${SLOW_BPS:-20971520} IMG_DIR=${IMG_DIR:-/var/tmp}
	[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "verdicts.sh: RUNS is a count of runs, not $RUNS" >&2; exit 2; }
	CLEAN_RUNS=${CLEAN_RUNS:-1}
	[[ $CLEAN_RUNS =~ ^[1-9][0-9]*$ ]] || { echo "verdicts.sh: CLEAN_RUNS is a count of runs, not $CLEAN_RUNS" >&2; exit 2; }
	[[ $SLOW_BPS =~ ^[1-9][0-9]{5,}$ ]] || { echo "verdicts.sh: SLOW_BPS is a limit in bytes/s of at least 100000, not $SLOW_BPS" >&2; exit 2; }
	QUICK_SLOW=("${@:2}")
	[ ${#QUICK_SLOW[@]} != 0 ] || QUICK_SLOW=(bench checkpoint io500 train objbench)
	for c in "${QUICK_SLOW[@]}"; do
		case $c in bench | checkpoint | io500 | train | objbench) ;; *)
			echo "verdicts.sh: quick-slow runs bench, checkpoint, io500, train or objbench, not $c" >&2
			exit 2
			;;
		esac
	done
	[ -d "$IMG_DIR" ] || { echo "verdicts.sh: IMG_DIR is a directory, not $IMG_DIR" >&2; exit 2; }
	[ "$(id -u)" = 0 ] || { echo "verdicts.sh: quick-slow needs root (a loop device and blkio cgroups)" >&2; exit 2; }
	[ -f /sys/fs/cgroup/blkio/blkio.throttle.read_bps_device ] || { echo "verdicts.sh: quick-slow needs blkio cgroups (v1) at /sys/fs/cgroup/blkio" >&2; exit 2; }
fi
work=$(mktemp -d)
minio_pid= cg= cg2= mnt= loopdev= img=
cleanup() {
	[ -n "$minio_pid" ] && kill "$minio_pid" 2>/dev/null && wait "$minio_pid" 2>/dev/null
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	[ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null
	[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
	[ -n "$cg2" ] && rmdir "$cg2" 2>/dev/null
	[ -n "$img" ] && rm -f "$img"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # the EXIT trap then cleans up
# shellcheck source=benchmarks/scripts/minio-lib.sh
source "$(dirname "$0")/minio-lib.sh"

# statuses FILE: "regressions worse better" of a compare -o json report.
statuses() {
	python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
n=lambda s: sum(1 for i in r["items"] if i["status"]==s)
print(r["regressions"], n("worse"), n("better"))' "$1"
}

# status FILE METRIC: one item's status.
status() {
	python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
print(next(i["status"] for i in r["items"] if i["metric"]==sys.argv[2]))' "$1" "$2"
}

# median FILE PHASE: a result's bytes/s of a phase.
median() {
	python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
print(int(next(p["bytes_per_sec"] for p in r["phases"] if p["name"]==sys.argv[2])))' "$1" "$2"
}

# compare_pair OLD NEW: prints "CODE REGRESSIONS WORSE BETTER" at default
# settings, then the same with --threshold.
compare_pair() {
	local code
	code=0
	"$FSBENCH" compare "$1" "$2" -o json >"$work/cmp.json" || code=$?
	echo "$code $(statuses "$work/cmp.json")"
	code=0
	"$FSBENCH" compare "$1" "$2" -o json --threshold "$THRESHOLD" >"$work/cmp10.json" || code=$?
	echo "$code $(statuses "$work/cmp10.json")"
}

false_alarms() {
	job "$1"
	local ok=0 ok10=0 regs=0 regs10=0 called=0 figures=0
	for i in $(seq "$PAIRS"); do
		"$FSBENCH" "${run[@]}" --result-file "$work/a.json" >/dev/null
		"$FSBENCH" "${run[@]}" --result-file "$work/b.json" >/dev/null
		keep "$i"
		local d t
		{ read -r -a d; read -r -a t; } < <(compare_pair "$work/a.json" "$work/b.json")
		echo "pair $i: default exit ${d[0]}, ${d[1]} regressions, ${d[2]} worse, ${d[3]} better; --threshold $THRESHOLD exit ${t[0]}, ${t[1]} regressions"
		[ "${d[0]}" = 0 ] && ok=$((ok + 1))
		[ "${t[0]}" = 0 ] && ok10=$((ok10 + 1))
		regs=$((regs + d[1])) regs10=$((regs10 + t[1]))
		[ $((d[2] + d[3])) -gt 0 ] && called=$((called + 1))
		figures=$((figures + d[2] + d[3]))
	done
	echo "false alarms, ${run[0]} on $1, --repeat $REPEAT: exit 0 in $ok/$PAIRS at default settings ($regs regressions), in $ok10/$PAIRS with --threshold $THRESHOLD ($regs10 regressions); a change was called in $called/$PAIRS comparisons ($figures figures)"
}

# keep PAIR: copies the pair's results to KEEP (when set) as
# PAIR-old.json and PAIR-new.json, to compare again later.
keep() {
	[ -n "${KEEP:-}" ] || return 0
	mkdir -p "$KEEP"
	cp "$work/a.json" "$KEEP/$1-old.json"
	cp "$work/b.json" "$KEEP/$1-new.json"
}

# slowed ARGS...: runs fsbench in the throttled blkio cgroup.
slowed() {
	bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$FSBENCH" "$@"
}

detect() {
	[ "$(id -u)" = 0 ] || { echo "detect: needs root (a loop device and a blkio cgroup)" >&2; exit 2; }
	# Room for two threads' files and the file system's own blocks. The
	# image lives in IMG_DIR (default /dev/shm): the loop device and its
	# limit are the same on any backing, and memory does not drift between
	# blocks of runs as this machine's virtual disk does (by 20-60%, more
	# than the slowdown planted).
	img=$(mktemp "${IMG_DIR:-/dev/shm}/fsbench-verdicts-XXXXXX.img")
	truncate -s "$(python3 -c "import sys; print(2 * int(sys.argv[1]) + (512 << 20))" "$(numfmt --from=iec "${BIG:-256M}")")" "$img"
	mkfs.ext4 -q "$img"
	loopdev=$(losetup --direct-io=on -f --show "$img")
	rm "$img" # the loop device holds it open; freed when detached
	mnt=$work/mnt
	mkdir -p "$mnt"
	mount "$loopdev" "$mnt"
	local majmin
	majmin=$(lsblk -dno MAJ:MIN "$loopdev" | tr -d ' ')
	cg=/sys/fs/cgroup/blkio/fsbench-verdicts-$$
	mkdir "$cg"
	# shellcheck disable=SC2206
	local run=(bench "$mnt" -p 2 --big-file-size "${BIG:-256M}" --small-file-count 0 --direct ${JOB:-} --repeat "$REPEAT" -q)
	local wflag=0 rflag=0 both=0
	for i in $(seq "$PAIRS"); do
		# The limits follow the device as it is now: SLOW of the median of
		# a fresh unthrottled result.
		"$FSBENCH" "${run[@]}" --result-file "$work/probe.json" >/dev/null
		local wbps rbps
		wbps=$(python3 -c "print(int($(median "$work/probe.json" write-big) * $SLOW))")
		rbps=$(python3 -c "print(int($(median "$work/probe.json" read-big) * $SLOW))")
		echo "$majmin $wbps" >"$cg/blkio.throttle.write_bps_device"
		echo "$majmin $rbps" >"$cg/blkio.throttle.read_bps_device"
		if [ $((i % 2)) = 1 ]; then
			"$FSBENCH" "${run[@]}" --result-file "$work/a.json" >/dev/null
			slowed "${run[@]}" --result-file "$work/b.json" >/dev/null
		else
			slowed "${run[@]}" --result-file "$work/b.json" >/dev/null
			"$FSBENCH" "${run[@]}" --result-file "$work/a.json" >/dev/null
		fi
		"$FSBENCH" compare "$work/a.json" "$work/b.json" -o json >"$work/cmp.json" || true
		local w r
		w=$(status "$work/cmp.json" write-big) r=$(status "$work/cmp.json" read-big)
		echo "pair $i: limits write $((wbps >> 20)) MiB/s, read $((rbps >> 20)) MiB/s; write-big $w, read-big $r"
		case $w in worse | regression) wflag=$((wflag + 1)) ;; esac
		case $r in worse | regression) rflag=$((rflag + 1)) ;; esac
		case "$w $r" in *worse*worse* | *worse*regression* | *regression*worse* | *regression*regression*) both=$((both + 1)) ;; esac
	done
	echo "detection, bench --direct on a loop device slowed to $SLOW, --repeat $REPEAT: write-big flagged in $wflag/$PAIRS, read-big in $rflag/$PAIRS, both in $both/$PAIRS"
}

# job TARGET: sets run to the false-alarm job on TARGET (a directory, ext4
# for a fresh ext4 on a loop device over an image in IMG_DIR, or minio for
# objbench on a fresh MinIO), with JOB and --repeat REPEAT; target_pid is
# the MinIO server's process.
job() {
	local target=$1
	case $target in
	ext4)
		[ "$(id -u)" = 0 ] || { echo "verdicts.sh: ext4 needs root (a loop device)" >&2; exit 2; }
		loop_ext4 2G "${IMG_DIR:-/var/tmp}"
		mkdir "$mnt/x"
		run=(bench "$mnt/x" -p 2 --big-file-size 32M --small-file-count 50)
		;;
	minio)
		start_minio verdicts
		export ACCESS_KEY=$AK SECRET_KEY=$SK
		run=(objbench --storage minio "http://$MINIO_ADDR/verdicts" --skip-functional-tests -p 2 --big-object-size 16M --small-objects 50)
		;;
	*)
		run=(bench "$target" -p 2 --big-file-size 32M --small-file-count 50)
		;;
	esac
	# shellcheck disable=SC2206
	run+=(${JOB:-} --repeat "$REPEAT" -q)
}

# frozen PID ARGS...: runs fsbench ARGS while freeze.py stops PID (the
# fsbench itself when PID is "self") for FREEZE of the wall-clock time.
frozen() {
	local target=$1 pid fz code=0
	shift
	"$FSBENCH" "$@" >/dev/null &
	pid=$!
	[ "$target" = self ] && target=$pid
	python3 "$(dirname "$0")/freeze.py" "$target" "$FREEZE" &
	fz=$!
	wait "$pid" || code=$?
	kill "$fz" 2>/dev/null
	wait "$fz" 2>/dev/null || true
	return "$code"
}

# slowdown TARGET: PAIRS pairs of the false-alarm job on TARGET, the NEW
# side slowed by stopping the storage's process for FREEZE (0.3) of the
# time in slices of 20 ms (freeze.py): fsbench on a directory (the file
# system works in its system calls), the MinIO server for minio. Each
# pair is compared with --threshold THRESHOLD and should exit 3.
slowdown() {
	job "$1"
	local victim=self flagged=0
	[ "$1" = minio ] && victim=$minio_pid
	for i in $(seq "$PAIRS"); do
		if [ $((i % 2)) = 1 ]; then
			"$FSBENCH" "${run[@]}" --result-file "$work/a.json" >/dev/null
			frozen "$victim" "${run[@]}" --result-file "$work/b.json"
		else
			frozen "$victim" "${run[@]}" --result-file "$work/b.json"
			"$FSBENCH" "${run[@]}" --result-file "$work/a.json" >/dev/null
		fi
		judged "$i" ""
	done
	echo "slowdown, ${run[0]} on $1 stopped for $FREEZE of the time, --repeat $REPEAT: exit 3 in $flagged/$PAIRS with --threshold $THRESHOLD"
}

# judged I NOTE [FLAGS...]: keeps pair I (a.json, b.json), compares it
# with --threshold THRESHOLD and FLAGS, counts an exit of 3 in the
# caller's flagged, and prints the pair's line, NOTE first.
judged() {
	local i=$1 note=$2 code=0
	shift 2
	keep "$i"
	"$FSBENCH" compare "$work/a.json" "$work/b.json" -o json --threshold "$THRESHOLD" "$@" >"$work/cmp.json" || code=$?
	[ "$code" = 3 ] && flagged=$((flagged + 1))
	echo "pair $i: $note--threshold $THRESHOLD exit $code, $(statuses "$work/cmp.json" | cut -d' ' -f1) regressions; NEW/OLD throughput $(ratios "$work/a.json" "$work/b.json")"
}

# ratios OLD NEW: each phase's NEW/OLD throughput (of the medians).
ratios() {
	python3 -c 'import json,sys
a,b=(json.load(open(f)) for f in sys.argv[1:3])
nb={p["name"]:p["value"]["value"] for p in b["phases"]}
print(" ".join("%s %.2f" % (p["name"], nb[p["name"]]/p["value"]["value"]) for p in a["phases"] if p["value"]["value"] and p["name"] in nb))' "$1" "$2"
}

# capped: PAIRS pairs of bench --direct on ext4 over a loop device (its
# image in IMG_DIR, default /dev/shm) whose reads and writes a blkio limit
# caps, as a cloud volume's provisioned throughput does: OLD at CAP_BPS,
# NEW at SLOW of it. The cap is far below what the device does even on a
# busy machine, so it binds in every run and every phase, and the planted
# slowdown is exactly 1-SLOW. Runs alternate sides; each pair is compared
# with --threshold THRESHOLD and should exit 3.
capped() {
	[ "$(id -u)" = 0 ] || { echo "capped: needs root (a loop device and blkio cgroups)" >&2; exit 2; }
	local majmin cap=${CAP_BPS:-104857600}
	loop_ext4 1G "${IMG_DIR:-/dev/shm}"
	local slow
	slow=$(python3 -c "import sys; print(int(int(sys.argv[1]) * float(sys.argv[2])))" "$cap" "${CAP_SLOW:-0.7}")
	local cgs=(/sys/fs/cgroup/blkio/fsbench-verdicts-old-$$ /sys/fs/cgroup/blkio/fsbench-verdicts-new-$$)
	mkdir "${cgs[0]}" "${cgs[1]}"
	cg=${cgs[1]} cg2=${cgs[0]}
	for x in "${cgs[0]} $cap" "${cgs[1]} $slow"; do
		echo "$majmin ${x#* }" >"${x% *}/blkio.throttle.read_bps_device"
		echo "$majmin ${x#* }" >"${x% *}/blkio.throttle.write_bps_device"
	done
	# shellcheck disable=SC2206
	run=(bench "$mnt" -p 2 --big-file-size ${BIG:-64M} --small-file-count 0 --direct ${JOB:-} --repeat "$REPEAT" -q)
	local flagged=0
	for i in $(seq "$PAIRS"); do
		if [ $((i % 2)) = 1 ]; then
			cg=${cgs[0]} slowed "${run[@]}" --result-file "$work/a.json" >/dev/null
			cg=${cgs[1]} slowed "${run[@]}" --result-file "$work/b.json" >/dev/null
		else
			cg=${cgs[1]} slowed "${run[@]}" --result-file "$work/b.json" >/dev/null
			cg=${cgs[0]} slowed "${run[@]}" --result-file "$work/a.json" >/dev/null
		fi
		judged "$i" ""
	done
	echo "capped, bench --direct on a loop device capped at $((cap >> 20)) MiB/s (OLD) and $((slow >> 20)) MiB/s (NEW), --repeat $REPEAT: exit 3 in $flagged/$PAIRS with --threshold $THRESHOLD"
}

# rated DIR: PAIRS pairs of one write phase on DIR (bench --rw write, two
# threads of a BIG file each), the NEW side held to RATE_SLOW (0.7) of the
# operations a second a fresh probe of the same job made just before
# (--rate): on a storage whose own speed is a CPU's, as tmpfs, where no
# device limit applies and a stopped process is made up for by the
# scheduler. The NEW side is the slower of its storage and the rate, so a
# drift of the machine between the probe and a side still shows. Only the
# throughput is compared (--metrics throughput): with --rate a latency
# counts from the operation's scheduled start, not comparable with the
# OLD side's. Runs alternate sides; each pair is compared with --threshold
# THRESHOLD and should exit 3.
rated() {
	# shellcheck disable=SC2206
	run=(bench "$1" --rw write --file-size "${BIG:-128M}" -p 2 --drop-caches never ${JOB:-} --repeat "$REPEAT" -q)
	local flagged=0
	for i in $(seq "$PAIRS"); do
		local rate probe=$work/probe.json
		# RATE_FROM=old: no probe; OLD runs first and NEW is held to
		# RATE_SLOW of OLD's own median, a slowdown of exactly 1-RATE_SLOW
		# against OLD when the storage keeps up.
		[ "${RATE_FROM:-}" = old ] && probe=$work/a.json
		"$FSBENCH" "${run[@]}" --result-file "$probe" >/dev/null
		rate=$(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
print("%.1f" % (r["phases"][0]["ops_per_sec"] * float(sys.argv[2])))' "$probe" "${RATE_SLOW:-0.7}")
		if [ "${RATE_FROM:-}" = old ]; then
			"$FSBENCH" "${run[@]}" --rate "$rate" --result-file "$work/b.json" >/dev/null
		elif [ $((i % 2)) = 1 ]; then
			"$FSBENCH" "${run[@]}" --result-file "$work/a.json" >/dev/null
			"$FSBENCH" "${run[@]}" --rate "$rate" --result-file "$work/b.json" >/dev/null
		else
			"$FSBENCH" "${run[@]}" --rate "$rate" --result-file "$work/b.json" >/dev/null
			"$FSBENCH" "${run[@]}" --result-file "$work/a.json" >/dev/null
		fi
		judged "$i" "--rate $rate; " --metrics throughput
	done
	echo "rated, bench --rw write on $1, NEW at ${RATE_SLOW:-0.7} of a probe's rate, --repeat $REPEAT: exit 3 in $flagged/$PAIRS with --threshold $THRESHOLD"
}

# recompare DIR: compares again the pairs KEEP kept in DIR (N-old.json,
# N-new.json) with --threshold THRESHOLD and the flags in COMPARE (such as
# --metrics throughput), with this FSBENCH: how many exit 3, and how many
# figures were tested.
recompare() {
	local dir=$1 n=0 flagged=0 i=1
	while [ -f "$dir/$i-old.json" ] && [ -f "$dir/$i-new.json" ]; do
		local code=0
		# shellcheck disable=SC2086
		"$FSBENCH" compare "$dir/$i-old.json" "$dir/$i-new.json" -o json --threshold "$THRESHOLD" ${COMPARE:-} >"$work/cmp.json" || code=$?
		[ "$code" = 3 ] && flagged=$((flagged + 1))
		echo "pair $i: exit $code, $(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
print("%d figures tested, %d regressions: %s" % (r.get("tested", 0), r["regressions"], " ".join("%s %+.1f%%" % (i["metric"], i["change_pct"]) for i in r["items"] if i["status"] == "regression")))' "$work/cmp.json")"
		n=$((n + 1)) i=$((i + 1))
	done
	[ "$n" != 0 ] || { echo "recompare: no kept pairs (N-old.json, N-new.json) in $dir" >&2; exit 2; }
	echo "recompare $dir: exit 3 in $flagged/$n pairs with --threshold $THRESHOLD"
}

# quick DIR: RUNS (10) runs of each --quick with its docs' expectations;
# counts the runs in which every expectation was judged.
quick() {
	local dir=$1 runs=${RUNS:-10}
	mkdir -p "$dir"
	local jobs=(
		"bench $dir -p 4|write-big>=200MiB/s stat.p99<5ms"
		"objbench --storage file $dir/obj -p 4|functional upload>=100MiB/s get-small.p99<20ms"
		"checkpoint $dir|write>=500MiB/s read.p99<50ms"
		"io500 $dir|ior-hard-write>=1GiB/s ior-easy-write>=100MiB/s mdtest-hard-write.p99<1s"
		"train $dir|"
	)
	for j in "${jobs[@]}"; do
		local args=${j%%|*} exprs=${j#*|} judged=0 verdicts=""
		local flags=()
		for e in $exprs; do flags+=(--expect "$e"); done
		for i in $(seq "$runs"); do
			# shellcheck disable=SC2086
			"$FSBENCH" $args --quick "${flags[@]}" -q -o json >"$work/q.json" || true
			local v
			v=$(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
for x in r["expectations"]:
    if x["verdict"] == "too short to judge":
        print(x["expr"] + ": " + x["reason"], file=sys.stderr)
print(" ".join(x["verdict"].replace(" ", "-") for x in r["expectations"]))' "$work/q.json")
			verdicts+="$v"$'\n'
			case $v in *too-short*) ;; *) judged=$((judged + 1)) ;; esac
		done
		echo "${args%% *} --quick: every expectation judged in $judged/$runs runs; verdicts: $(grep -v '^$' <<<"$verdicts" | sort | uniq -c | sed 's/^ *//' | paste -sd ';')"
	done
}

# loop_ext4 SIZE DIR: ext4 on a loop device over an image in DIR, mounted
# at $work/mnt; sets loopdev, mnt and majmin.
loop_ext4() {
	img=$(mktemp "$2/fsbench-verdicts-XXXXXX.img")
	truncate -s "$1" "$img"
	mkfs.ext4 -q "$img"
	loopdev=$(losetup --direct-io=on -f --show "$img")
	rm "$img" # the loop device holds it open; freed when detached
	img=
	mnt=$work/mnt
	mkdir -p "$mnt"
	mount "$loopdev" "$mnt"
	majmin=$(lsblk -dno MAJ:MIN "$loopdev" | tr -d ' ')
}

# quick_slow: each command's --quick on the loop device, once unthrottled
# (it must pass: exit 0), then RUNS times in a blkio cgroup of its own
# whose reads and writes are limited to SLOW_BPS: each run should exit 3.
quick_slow() {
	local majmin
	loop_ext4 4G "$IMG_DIR"
	# io500 runs its phases back to back by default, its reads served by
	# the page cache: --drop-caches auto makes them reach the device.
	# Bounds of twice the limit: the throttled storage cannot reach them,
	# an unthrottled loop device passes them by far.
	local bound=$((2 * SLOW_BPS / 1048576))MiB/s
	# train's dataset is made once, unthrottled, and kept for every run:
	# its --direct writes would otherwise take minutes a run.
	mkdir "$mnt/train"
	# objbench's file store drops its objects from the caches before its
	# gets (--drop-caches auto), as bench does before its reads.
	local jobs=(
		"bench $mnt -p 1|read-big>=$bound"
		"checkpoint $mnt|read>=$bound"
		"io500 $mnt --drop-caches auto|ior-easy-read>=$bound"
		"train $mnt/train --direct|"
		"objbench --storage file $mnt/obj|download>=$bound"
	)
	local keep
	for j in "${jobs[@]}"; do
		local args=${j%%|*} exprs=${j#*|} failed=0 codes=""
		[[ " ${QUICK_SLOW[*]} " = *" ${args%% *} "* ]] || continue
		local flags=()
		for e in $exprs; do flags+=(--expect "$e"); done
		local code=0 passed=0 judged=0
		keep=
		[ "${args%% *}" = train ] && keep=--keep
		for i in $(seq "$CLEAN_RUNS"); do
			code=0
			# shellcheck disable=SC2086
			"$FSBENCH" $args --quick "${flags[@]}" -q -o json $keep >"$work/q.json" || code=$?
			[ "$code" = 0 ] && passed=$((passed + 1))
			[[ "$(summary "$work/q.json")" = *"too short"* ]] || judged=$((judged + 1))
			echo "${args%% *} --quick ${exprs:-(its AU)}: unthrottled exit $code ($(summary "$work/q.json"))"
			keep=
		done
		[ "${args%% *}" = train ] && keep=--keep
		echo "${args%% *} --quick, unthrottled: exit 0 in $passed/$CLEAN_RUNS runs, every expectation judged in $judged/$CLEAN_RUNS"
		if [ -n "$keep" ]; then
			local ds
			ds=$(find "$mnt/train" -mindepth 1 -maxdepth 1 -type d | head -1)
			args+=" --dataset $ds"
		fi
		for i in $(seq "$RUNS"); do
			cg=/sys/fs/cgroup/blkio/fsbench-verdicts-slow-$$-$i
			mkdir "$cg"
			echo "$majmin $SLOW_BPS" >"$cg/blkio.throttle.read_bps_device"
			echo "$majmin $SLOW_BPS" >"$cg/blkio.throttle.write_bps_device"
			code=0
			# shellcheck disable=SC2086
			slowed $args --quick "${flags[@]}" -q -o json >"$work/q.json" || code=$?
			rmdir "$cg"
			cg=
			codes+="$code "
			[ "$code" = 3 ] && failed=$((failed + 1))
			echo "  run $i: exit $code ($(summary "$work/q.json"))"
		done
		echo "${args%% *} --quick, reads limited to $((SLOW_BPS >> 20)) MiB/s: exit 3 in $failed/$RUNS runs (exits: ${codes% })"
	done
}

# summary FILE: each expectation's verdict and value, or train's AU.
summary() {
	python3 -c 'import json,sys
try:
    r=json.load(open(sys.argv[1]))
except Exception as e:
    print("no result"); sys.exit()
t=r.get("training")
if t: print("AU %.1f%% of %.0f%%: %s" % (t["au_pct"], t["au_threshold_pct"], t.get("verdict", "")))
def v(x):
    return "%.4g %s" % (x.get("measured", 0), x.get("unit", ""))
print("; ".join("%s: %s, %s" % (x["expr"], v(x), x["verdict"]) for x in r.get("expectations") or []))' "$1" | paste -sd ' '
}

case $mode in
false-alarms) false_alarms "${2:?false-alarms DIR|ext4|minio}" ;;
detect) detect ;;
slowdown) FREEZE=${FREEZE:-0.3} slowdown "${2:?slowdown DIR|ext4|minio}" ;;
recompare) recompare "${2:?recompare DIR}" ;;
capped) capped ;;
rated) rated "${2:?rated DIR}" ;;
quick) quick "${2:?quick DIR}" ;;
quick-slow) quick_slow ;;
*)
	echo "usage: verdicts.sh false-alarms DIR|ext4|minio | verdicts.sh slowdown DIR|ext4|minio | verdicts.sh capped | verdicts.sh rated DIR | verdicts.sh recompare DIR | verdicts.sh detect | verdicts.sh quick DIR | verdicts.sh quick-slow [bench|checkpoint|io500|train|objbench...]" >&2
	exit 2
	;;
esac
