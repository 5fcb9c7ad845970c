#!/usr/bin/env bash
# history-series.sh: real series for fsbench history, from one short job
# run many times on this machine (as root: a loop device and a blkio
# cgroup).
#
#   bash benchmarks/scripts/history-series.sh OUT [RUNS] [STEP] [FRACTION]
#
# The job: fsbench fio, 4 KiB O_DIRECT random reads of a 32 MiB file for
# SECONDS (2) on ext4 over a loop device (--direct-io=on, an image of
# 256 MiB in IMG_DIR, default /var/tmp). It runs RUNS (32) times, each
# result in OUT/flat/rNN.json: a series in which nothing changes. Then
# RUNS times again into OUT/step/, from run STEP (20, counted from 1) on in
# a blkio cgroup (v1) that limits reads from the loop device to FRACTION
# (0.9) of the median rate of the runs before: a step planted by the
# kernel, not by editing numbers. With BASE=RATE (bytes a second) every
# run of the step series is limited, to RATE before run STEP and to
# FRACTION x RATE from it on: on a machine so loaded that the job's own
# rate swings by more than the step, the limit then sets both levels.
# With RAMP=R as well, the limit from run STEP on falls by R x BASE more
# at every run (0.004: about 3% a week at a run a day), a slow decline
# instead of a step. The machine's load average is written
# beside each result (OUT/*/load.txt). FLAT=0 leaves out the series without
# a step. GAP=S waits S seconds after each run, so that a series spans an
# hour or a day of the machine's changing state. Everything made is
# removed at exit.
set -euo pipefail
out=${1:?usage: history-series.sh OUT [RUNS] [STEP] [FRACTION]}
runs=${2:-32}
step=${3:-20}
fraction=${4:-0.9}
seconds=${SECONDS_PER_RUN:-2}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fsbench=${FSBENCH:-$root/bin/fsbench}
[ "$(id -u)" = 0 ] || { echo "history-series.sh: needs root (a loop device and a blkio cgroup)" >&2; exit 2; }
[ -f /sys/fs/cgroup/blkio/blkio.throttle.read_bps_device ] || { echo "history-series.sh: needs blkio cgroups (v1) at /sys/fs/cgroup/blkio" >&2; exit 2; }

work=$(mktemp -d "${IMG_DIR:-/var/tmp}/fsbench-history-XXXXXX")
mnt=$work/mnt loopdev= cg=/sys/fs/cgroup/blkio/fsbench-history-$$
cleanup() {
	[ -d "$cg" ] && rmdir "$cg" 2>/dev/null
	mountpoint -q "$mnt" && umount "$mnt"
	[ -n "$loopdev" ] && losetup -d "$loopdev"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM # the clean-up runs on these too
truncate -s 256M "$work/img"
mkfs.ext4 -q "$work/img"
loopdev=$(losetup --direct-io=on -f --show "$work/img")
mkdir -p "$mnt" "$out/flat" "$out/step"
mount "$loopdev" "$mnt"
majmin=$(lsblk -dno MAJ:MIN "$loopdev" | tr -d ' ')
mkdir "$cg"

# run DIR N [CGROUP]: one run of the job, its result DIR/rNN.json.
run() {
	local dir=$1 n=$2 group=${3:-}
	local args=(fio --name=randread --rw=randread --bs=4k --direct=1 --size=32M --runtime="$seconds" --time_based
		--directory="$mnt" -q --result-file "$(printf '%s/r%02d.json' "$dir" "$n")")
	if [ -n "$group" ]; then
		sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$group" "$fsbench" "${args[@]}" >/dev/null
	else
		"$fsbench" "${args[@]}" >/dev/null
	fi
	printf 'r%02d %s\n' "$n" "$(cut -d' ' -f1 /proc/loadavg)" >>"$dir/load.txt"
	sleep "${GAP:-0}"
}

if [ "${FLAT:-1}" != 0 ]; then
	for n in $(seq 1 "$runs"); do run "$out/flat" "$n"; done
fi
if [ -n "${BASE:-}" ]; then
	echo "$majmin $BASE" >"$cg/blkio.throttle.read_bps_device"
	echo "runs 1 to $((step - 1)): reads limited to $BASE B/s" | tee "$out/step/limit.txt"
fi
for n in $(seq 1 "$runs"); do
	if [ "$n" -ge "$step" ] && [ -n "${BASE:-}" ] && [ -n "${RAMP:-}" ]; then
		limit=$(python3 -c 'import sys; b,r,k=int(sys.argv[1]),float(sys.argv[2]),int(sys.argv[3]); print(int(b*(1-r*k)))' "$BASE" "$RAMP" "$((n - step + 1))")
		echo "$majmin $limit" >"$cg/blkio.throttle.read_bps_device"
		echo "run $n: reads limited to $limit B/s" >>"$out/step/limit.txt"
	elif [ "$n" -eq "$step" ] && [ -n "${BASE:-}" ]; then
		limit=$(python3 -c 'import sys; print(int(int(sys.argv[1])*float(sys.argv[2])))' "$BASE" "$fraction")
		echo "$majmin $limit" >"$cg/blkio.throttle.read_bps_device"
		echo "step at run $n: reads limited to $limit B/s ($fraction of $BASE)" | tee -a "$out/step/limit.txt"
	elif [ "$n" -eq "$step" ]; then
		limit=$(python3 -c 'import json,sys,statistics
v=[json.load(open(f))["phases"][0]["bytes_per_sec"] for f in sys.argv[2:]]
print(int(statistics.median(v)*float(sys.argv[1])))' "$fraction" "$out"/step/r*.json)
		echo "$majmin $limit" >"$cg/blkio.throttle.read_bps_device"
		echo "step at run $n: reads limited to $limit B/s ($fraction of the median before)" | tee "$out/step/limit.txt"
	fi
	if [ "$n" -ge "$step" ] || [ -n "${BASE:-}" ]; then run "$out/step" "$n" "$cg"; else run "$out/step" "$n"; fi
done
