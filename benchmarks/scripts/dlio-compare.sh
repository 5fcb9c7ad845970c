#!/usr/bin/env bash
# Runs MLPerf Storage's DLIO benchmark and `fsbench train` on the same
# training workload, side by side, on a tmpfs this script mounts (and
# unmounts), and prints per accelerator count and dataset layout: the
# accelerator utilisation (AU, compute time / wall time, in %) each reports,
# the peak RSS of one DLIO rank (the largest) and of the fsbench process, the
# client CPU seconds (user + system) of the training run of each (all ranks,
# start-up included), and the machine's 1-minute load average after the
# DLIO run (other work on the machine takes cores from both tools).
#
# The workload is DLIO's resnet50_h100 (MLPerf Storage): TFRecord files of
# 114,660-byte samples, batches of 400, 8 read threads, 0.224 s of
# computation per batch; fewer files and epochs than the real one so that it
# fits a small machine. Two layouts: "packed" (1,251 samples a file, as
# MLPerf Storage has it) and "single" (one sample a file). DLIO writes its
# own dataset (mpirun with as many ranks as cores), then trains with
# `mpirun -np N` (one rank per emulated accelerator, --bind-to none so that
# every rank may use every core, as fsbench's threads may); fsbench writes
# its own dataset, then trains with -p N.
#
# Usage: DLIO_VENV=/path/to/venv dlio-compare.sh
# DLIO_VENV is a Python venv with dlio-benchmark and what it imports
# (tensorflow-cpu, mpi4py, hydra-core, ...); mpirun (Open MPI) is on PATH.
# Needs root (mount). Environment: FSBENCH (default bin/fsbench),
# ACCELERATORS (default "1 2 3 4"), LAYOUTS (default "packed single"),
# FILES (packed files, default 16), SINGLE_FILES (files of the single
# layout, default 6400), EPOCHS (default 2), MNT (mount point, default a new
# directory under /tmp), TMPFS_SIZE (default 8G), KEEP (a directory to keep
# every run's logs and summaries in).
set -euo pipefail
if [ -z "${DLIO_VENV:-}" ] || [ ! -x "${DLIO_VENV}/bin/dlio_benchmark" ]; then
	echo "dlio-compare: DLIO_VENV=${DLIO_VENV:-(unset)} is not a Python venv with dlio_benchmark in bin/ (python3 -m venv DIR; DIR/bin/pip install dlio-benchmark ...; see benchmarks/records/training.md)" >&2
	exit 2
fi
cd "$(dirname "$0")/../.."
FSBENCH=${FSBENCH:-bin/fsbench}
ACCELERATORS=${ACCELERATORS:-"1 2 3 4"}
LAYOUTS=${LAYOUTS:-"packed single"}
FILES=${FILES:-16}
SINGLE_FILES=${SINGLE_FILES:-6400}
EPOCHS=${EPOCHS:-2}
TMPFS_SIZE=${TMPFS_SIZE:-8G}
PY="$DLIO_VENV/bin/python"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
command -v mpirun >/dev/null || { echo "dlio-compare: mpirun is not on PATH (apt-get install openmpi-bin)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "dlio-compare: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "dlio-compare: needs root to mount a tmpfs" >&2; exit 2; }
FSBENCH_TRAIN=1
if [ ! -x "$FSBENCH" ] || ! "$FSBENCH" train --help >/dev/null 2>&1; then
	echo "dlio-compare: $FSBENCH has no train command (make build on a tree that has it): DLIO side only" >&2
	FSBENCH_TRAIN=0
fi

mnt=${MNT:-$(mktemp -d /tmp/dlio-compare.XXXXXX)}
mkdir -p "$mnt"
mount -t tmpfs -o size="$TMPFS_SIZE" dlio-compare "$mnt"
cleanup() {
	cd /
	umount "$mnt" 2>/dev/null || umount -l "$mnt"
	[ -n "${MNT:-}" ] || rmdir "$mnt"
}
trap cleanup EXIT
trap 'exit 1' INT TERM # the clean-up runs on these too
# DLIO's TFRecord writer indexes every file with DALI's tfrecord2idx; the
# index is for DALI's reader only, which this workload does not use.
mkdir -p "$mnt/bin"
printf '#!/bin/sh\n: > "$2"\n' > "$mnt/bin/tfrecord2idx"
chmod +x "$mnt/bin/tfrecord2idx"
export PATH="$mnt/bin:$DLIO_VENV/bin:$PATH" TF_CPP_MIN_LOG_LEVEL=2

# files LAYOUT, samples LAYOUT: the dataset's shape.
files() { if [ "$1" = packed ]; then echo "$FILES"; else echo "$SINGLE_FILES"; fi; }
samples() { if [ "$1" = packed ]; then echo 1251; else echo 1; fi; }

# dlio LAYOUT OUTDIR NP GENERATE [TIME_PREFIX...]: one DLIO run.
dlio() {
	local layout=$1 out=$2 np=$3 gen=$4 train=True
	shift 4
	[ "$gen" = True ] && train=False
	mkdir -p "$out"
	(cd "$out" && "${MPIRUN[@]}" -np "$np" "$@" dlio_benchmark workload=resnet50_h100 \
		++workload.workflow.generate_data="$gen" ++workload.workflow.train="$train" \
		++workload.dataset.num_files_train="$(files "$layout")" \
		++workload.dataset.num_samples_per_file="$(samples "$layout")" \
		++workload.dataset.record_length=114660 ++workload.dataset.record_length_stdev=0 \
		++workload.dataset.data_folder="$mnt/dlio-$layout" \
		++workload.reader.batch_size=400 ++workload.reader.read_threads=8 \
		++workload.train.computation_time=0.224 ++workload.train.epochs="$EPOCHS" \
		++workload.output.folder="$out" hydra.run.dir="$out" >"$out/stdout.log" 2>&1) || {
		echo "dlio-compare: DLIO failed ($layout, $np ranks), see its log:" >&2
		tail -20 "$out/stdout.log" >&2
		exit 1
	}
}

# TIMED OUTDIR CMD...: runs CMD under /usr/bin/time -v, with one report per
# MPI rank (OUTDIR/time.RANK) or for a single process (OUTDIR/time.0).
TIMED=(sh -c 'exec /usr/bin/time -v -o "$0/time.${OMPI_COMM_WORLD_RANK:-0}" "$@"')

# usage OUTDIR -> "max_rss_MiB cpu_seconds" over the time.* reports in OUTDIR.
usage() {
	"$PY" - "$1" <<-'EOF'
		import glob, sys
		rss, cpu = 0, 0.0
		for f in glob.glob(sys.argv[1] + "/time.*"):
		    for line in open(f):
		        k, _, v = line.strip().rpartition(": ")
		        if k == "Maximum resident set size (kbytes)":
		            rss = max(rss, int(v))
		        elif k in ("User time (seconds)", "System time (seconds)"):
		            cpu += float(v)
		print("%.0f %.1f" % (rss / 1024, cpu))
	EOF
}

dlio_au() { "$PY" -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["metric"]["train_au_mean_percentage"])' "$1/summary.json"; }

# dlio_row LAYOUT N -> "au rss cpu"
dlio_row() {
	local out="$mnt/out/dlio-$1-$2"
	dlio "$1" "$out" "$2" False "${TIMED[@]}" "$out"
	echo "$(dlio_au "$out") $(usage "$out")"
}

# FSBENCH_TRAIN_ARGS: the training flags of fsbench train (the dataset's
# shape is given when it is written, fsbench_gen). The dataset stays in the
# kernel's caches, as a tmpfs's data always does (and as DLIO leaves it).
FSBENCH_TRAIN_ARGS=(--model resnet50 --batch-size 400 --read-threads 8 --compute-time 0.224s
	--epochs "$EPOCHS" --drop-caches never --json)

# fsbench LAYOUT OUTDIR TIMED FLAGS...: one fsbench train run, under
# /usr/bin/time if TIMED is 1; an AU under the threshold (exit 3) is a
# result, not a failure.
fsbench() {
	local layout=$1 out=$2 timed=$3 rc=0 wrap=()
	shift 3
	mkdir -p "$out"
	[ "$timed" = 0 ] || wrap=("${TIMED[@]}" "$out")
	"${wrap[@]}" "$FSBENCH" train "$mnt/fsbench-$layout" "${FSBENCH_TRAIN_ARGS[@]}" "$@" \
		>"$out/result.json" 2>"$out/stderr.log" || rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
		echo "dlio-compare: fsbench train failed ($layout, exit $rc):" >&2
		tail -5 "$out/stderr.log" >&2
		exit 1
	fi
}

# fsbench_gen LAYOUT: writes the layout's dataset and keeps it.
fsbench_gen() {
	[ "$FSBENCH_TRAIN" = 1 ] || return 0
	mkdir -p "$mnt/fsbench-$1"
	fsbench "$1" "$mnt/out/fsbench-$1-gen" 0 --keep --epochs 1 --dataset-files "$(files "$1")" \
		--samples-per-file "$(samples "$1")" --sample-size 114660 --sample-size-stdev 0
}

# fsbench_row LAYOUT N -> "au rss cpu" of a training run on the kept dataset.
fsbench_row() {
	local out="$mnt/out/fsbench-$1-$2" ds
	if [ "$FSBENCH_TRAIN" = 0 ]; then
		echo "n/a n/a n/a"
		return
	fi
	ds=$(echo "$mnt/fsbench-$1"/fsbench-*)
	fsbench "$1" "$out" 1 --dataset "$ds" -p "$2"
	echo "$("$PY" -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["training"]["au_pct"])' "$out/result.json") $(usage "$out")"
}

echo "DLIO $("$PY" -c 'import importlib.metadata as m; print(m.version("dlio-benchmark"))') vs fsbench $("$FSBENCH" --version 2>/dev/null | awk '{print $2}') on tmpfs; resnet50 h100: samples of 114660 B, batch 400, 8 read threads, 0.224 s compute; $EPOCHS epochs; packed: $FILES files x 1251 samples, single: $SINGLE_FILES files x 1 sample; $(nproc) cores, $(free -g | awk '/^Mem/{print $2}') GiB"
# The last column is the machine's load average (1 minute) after the DLIO
# run: other work on the machine takes cores from both tools.
printf '%-5s %-7s %9s %11s %13s %13s %9s %11s %5s\n' accel layout "DLIO AU%" "fsbench AU%" "DLIO RSS/rank" "fsbench RSS" "DLIO CPU" "fsbench CPU" load
printf '%-5s %-7s %9s %11s %13s %13s %9s %11s %5s\n' "" "" "" "" "MiB (max)" MiB s s ""
for layout in $LAYOUTS; do
	dlio "$layout" "$mnt/out/dlio-$layout-gen" "$(nproc)" True
	fsbench_gen "$layout"
	for n in $ACCELERATORS; do
		row=$(dlio_row "$layout" "$n")
		read -r da dr dc <<<"$row"
		load=$(cut -d' ' -f1 /proc/loadavg)
		row=$(fsbench_row "$layout" "$n")
		read -r fa fr fc <<<"$row"
		printf '%-5s %-7s %9s %11s %13s %13s %9s %11s %5s\n' "$n" "$layout" "$da" "$fa" "$dr" "$fr" "$dc" "$fc" "$load"
	done
	[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && cp -r "$mnt/out/." "$KEEP/"; }
	rm -rf "$mnt/dlio-$layout" "$mnt/fsbench-$layout" "$mnt/out"
done
