#!/usr/bin/env bash
# Runs DLIO's object-store path (storage_type s3: s3torchconnector, DLIO's
# NPZ reader for S3) and `fsbench train --storage minio` on the same
# training workloads against one local MinIO server, alternating the two,
# and prints one line per run: the accelerator utilisation (AU, in %) each
# tool reports, the client's CPU seconds (user + system of the whole run:
# mpirun and every DLIO rank and data-loader worker, or the one fsbench
# process; start-up included) and CPU seconds per GiB of samples read, the
# peak RSS of the largest client process and the sum of every rank's peak,
# MinIO's CPU seconds during the run, the time of the training epochs (for
# DLIO, the slowest rank's) and the MiB/s of samples read over them (first
# steps included: the AU is counted without them, see benchmarks/records/training.md), the
# wall time of the whole run and the machine's 1-minute load average at the
# start of the run; then the medians per case, tool and accelerator count.
#
# Cases (CASES, default "unet3d resnet50"):
#   unet3d    DLIO's unet3d_h100_s3 (MLPerf Storage's 3D U-Net on H100,
#             object store): NPZ objects of one 146,600,628-byte sample,
#             batches of 7, 4 read threads, 0.323 s of computation a batch.
#   resnet50  DLIO's resnet50_h100 (MLPerf Storage) moved to the object
#             store the only way DLIO's S3 path allows: its readers read NPZ
#             or NPY objects, each whole, on every sample (DLIO's default
#             on-demand reads), so the dataset is one 114,660-byte sample
#             an object (NPZ) rather than TFRecord files of 1,251 samples;
#             batches of 400, 8 read threads, 0.224 s a batch, PyTorch's
#             data loader.
# fsbench trains on a dataset of the same shape (files, one sample a file,
# sample size, no size spread), with the same batch, read threads, compute
# time and epochs; each tool writes its own dataset once, and every run
# trains on it again.
#
# Usage: DLIO_VENV=/path/to/venv dlio-s3-compare.sh
# DLIO_VENV is a Python venv with a DLIO that has the S3 reader
# (dlio_benchmark.reader.npz_reader_s3; dlio-benchmark 2.0.0 on PyPI
# predates it) and s3torchconnector; mpirun (Open MPI), /usr/bin/time, curl
# (7.75 or later, for --aws-sigv4) and a MinIO server (MINIO, or minio on
# PATH, or make test-deps' copy) are needed; root is not. Environment:
# FSBENCH (default bin/fsbench), CASES, ACCELERATORS (default "1 2"), PAIRS
# (runs of each tool per case and count, alternated, default 6),
# UNET3D_FILES (default 56), RESNET50_FILES (default 8000), EPOCHS
# (default 2), WORK (where the run makes its own directory for MinIO's data
# and the runs' outputs, default /var/tmp; that directory, and nothing else,
# is removed at the end), KEEP (a directory to keep every run's logs,
# summaries and results in).
set -euo pipefail
name=dlio-s3-compare
if [ -z "${DLIO_VENV:-}" ] || [ ! -x "${DLIO_VENV}/bin/dlio_benchmark" ]; then
	echo "$name: DLIO_VENV=${DLIO_VENV:-(unset)} is not a Python venv with dlio_benchmark in bin/ (python3 -m venv DIR; DIR/bin/pip install DLIO's source and s3torchconnector; see benchmarks/records/training.md)" >&2
	exit 2
fi
if ! "$DLIO_VENV/bin/python" -c 'import dlio_benchmark.reader.npz_reader_s3, s3torchconnector' >/dev/null 2>&1; then
	echo "$name: DLIO_VENV=$DLIO_VENV has dlio_benchmark without its S3 reader or s3torchconnector (dlio-benchmark 2.0.0 from PyPI predates it: install DLIO from its source and s3torchconnector; see benchmarks/records/training.md)" >&2
	exit 2
fi
cd "$(dirname "$0")/../.."
FSBENCH=${FSBENCH:-bin/fsbench}
CASES=${CASES:-"unet3d resnet50"}
ACCELERATORS=${ACCELERATORS:-"1 2"}
PAIRS=${PAIRS:-6}
UNET3D_FILES=${UNET3D_FILES:-56}
RESNET50_FILES=${RESNET50_FILES:-8000}
EPOCHS=${EPOCHS:-2}
PY="$DLIO_VENV/bin/python"
# DLIO runs through dlio-s3-keys.py: DLIO's S3 storage keys each object by
# its whole URI ("s3://BUCKET/..."), which MinIO refuses; see that file.
KEYS=$PWD/benchmarks/scripts/dlio-s3-keys.py
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
CACHE_BIN=${FSBENCH_TEST_BIN:-$HOME/.cache/fsbench-test/bin}
MINIO=${MINIO:-$(command -v minio || { [ -x "$CACHE_BIN/minio" ] && echo "$CACHE_BIN/minio"; } || true)}
command -v mpirun >/dev/null || { echo "$name: mpirun is not on PATH (apt-get install openmpi-bin)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "$name: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
[ -n "$MINIO" ] && [ -x "$MINIO" ] || { echo "$name: no MinIO server (make test-deps, or MINIO=path)" >&2; exit 2; }
curl --help all 2>/dev/null | grep -q -- --aws-sigv4 || { echo "$name: curl has no --aws-sigv4 (curl 7.75 or later is needed to create the bucket)" >&2; exit 2; }
"$FSBENCH" train --help 2>/dev/null | grep -q -- --storage || { echo "$name: $FSBENCH has no train --storage (make build)" >&2; exit 2; }

mkdir -p "${WORK:=/var/tmp}"
work=$(mktemp -d "$WORK/$name.XXXXXX")
minio_pid=
cleanup() {
	[ -z "$minio_pid" ] || { kill "$minio_pid" 2>/dev/null; wait "$minio_pid" 2>/dev/null || true; }
	[ -z "${KEEP:-}" ] || [ ! -d "$work/out" ] || { mkdir -p "$KEEP" && cp -r "$work/out/." "$KEEP/"; }
	rm -rf "$work"
}
trap cleanup EXIT
trap "exit 1" INT TERM
# shellcheck source=benchmarks/scripts/minio-lib.sh
. benchmarks/scripts/minio-lib.sh
start_minio "$name"
BUCKET=dlio-s3-compare
code=$(curl -s -o "$work/bucket.xml" -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK" -X PUT "http://$MINIO_ADDR/$BUCKET")
[ "$code" = 200 ] || { echo "$name: creating bucket $BUCKET: HTTP $code: $(head -c 300 "$work/bucket.xml")" >&2; exit 1; }
export ACCESS_KEY=$AK SECRET_KEY=$SK TF_CPP_MIN_LOG_LEVEL=2 PATH="$DLIO_VENV/bin:$PATH"

# The cases' shapes: files, sample size, batch, read threads, compute
# time (s), DLIO's workload and its extra overrides, fsbench's model.
files() { if [ "$1" = unet3d ]; then echo "$UNET3D_FILES"; else echo "$RESNET50_FILES"; fi; }
sample_size() { if [ "$1" = unet3d ]; then echo 146600628; else echo 114660; fi; }
batch() { if [ "$1" = unet3d ]; then echo 7; else echo 400; fi; }
threads() { if [ "$1" = unet3d ]; then echo 4; else echo 8; fi; }
compute() { if [ "$1" = unet3d ]; then echo 0.323; else echo 0.224; fi; }
dlio_workload() {
	if [ "$1" = unet3d ]; then
		echo workload=unet3d_h100_s3
	else
		echo workload=resnet50_h100 ++workload.framework=pytorch ++workload.reader.data_loader=pytorch \
			++workload.dataset.format=npz
	fi
}

# dlio CASE OUTDIR NP GENERATE [TIME_PREFIX...]: one DLIO run; a training
# run (GENERATE False) under /usr/bin/time as a whole (OUTER).
dlio() {
	local c=$1 out=$2 np=$3 gen=$4 train=True outer=()
	shift 4
	[ "$gen" = True ] && train=False
	[ "$gen" = True ] || outer=("${OUTER[@]}" "$out")
	mkdir -p "$out"
	# shellcheck disable=SC2046 # the workload's words are overrides
	(cd "$out" && "${outer[@]}" "${MPIRUN[@]}" -np "$np" "$@" "$PY" "$KEYS" $(dlio_workload "$c") \
		++workload.workflow.generate_data="$gen" ++workload.workflow.train="$train" \
		++workload.workflow.checkpoint=False \
		++workload.storage.storage_type=s3 ++workload.storage.storage_root="$BUCKET" \
		++workload.dataset.data_folder="s3://$BUCKET/dlio-$c" \
		++workload.storage.storage_options.access_key_id="$AK" \
		++workload.storage.storage_options.secret_access_key="$SK" \
		++workload.storage.storage_options.endpoint_url="http://$MINIO_ADDR" \
		++workload.storage.storage_options.region=us-east-1 \
		++workload.storage.storage_options.s3_force_path_style="'true'" \
		++workload.dataset.num_subfolders_train=0 ++workload.dataset.num_subfolders_eval=0 \
		++workload.dataset.num_files_train="$(files "$c")" ++workload.dataset.num_samples_per_file=1 \
		++workload.dataset.record_length_bytes="$(sample_size "$c")" ++workload.dataset.record_length_bytes_stdev=0 \
		++workload.reader.batch_size="$(batch "$c")" ++workload.reader.read_threads="$(threads "$c")" \
		++workload.train.computation_time="$(compute "$c")" ++workload.train.epochs="$EPOCHS" \
		++workload.output.folder="$out" hydra.run.dir="$out" >"$out/stdout.log" 2>&1) || {
		echo "$name: DLIO failed ($c, $np ranks), see its log:" >&2
		tail -20 "$out/stdout.log" | sed "s/$SK/SECRET/g" >&2
		exit 1
	}
}

# TIMED OUTDIR CMD...: CMD under /usr/bin/time -v, one report per MPI rank
# (OUTDIR/time.RANK) or for a single process (OUTDIR/time.0); OUTER OUTDIR
# CMD...: one report over the whole command (mpirun and all it starts).
TIMED=(sh -c 'exec /usr/bin/time -v -o "$0/time.${OMPI_COMM_WORLD_RANK:-0}" "$@"')
OUTER=(sh -c 'exec /usr/bin/time -v -o "$0/time.all" "$@"')

# usage OUTDIR -> "cpu_s max_rss_MiB sum_rss_MiB": CPU from time.all, RSS
# from the per-process reports.
usage() {
	"$PY" - "$1" <<-'EOF'
		import glob, sys
		def read(f):
		    d = {}
		    for line in open(f):
		        k, _, v = line.strip().rpartition(": ")
		        d[k] = v
		    return d
		rss = [int(read(f)["Maximum resident set size (kbytes)"]) for f in glob.glob(sys.argv[1] + "/time.[0-9]*")]
		a = read(sys.argv[1] + "/time.all")
		cpu = float(a["User time (seconds)"]) + float(a["System time (seconds)"])
		print("%.1f %.0f %.0f" % (cpu, max(rss) / 1024, sum(rss) / 1024))
	EOF
}

# minio_cpu -> MinIO's CPU seconds so far (user + system).
minio_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$minio_pid/stat"; }

# fsbench CASE OUTDIR FLAGS...: one fsbench train run under /usr/bin/time;
# an AU under the threshold (exit 3) is a result, not a failure.
fsbench() {
	local c=$1 out=$2 rc=0
	shift 2
	mkdir -p "$out"
	"${OUTER[@]}" "$out" "${TIMED[@]}" "$out" "$FSBENCH" train --storage minio "http://$MINIO_ADDR/$BUCKET" \
		--model "$c" --accelerator-type h100 --batch-size "$(batch "$c")" --read-threads "$(threads "$c")" \
		--compute-time "$(compute "$c")s" --epochs "$EPOCHS" --json "$@" \
		>"$out/result.json" 2>"$out/stderr.log" || rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
		echo "$name: fsbench train failed ($c, exit $rc):" >&2
		tail -5 "$out/stderr.log" >&2
		exit 1
	fi
}

# generate CASE: each tool writes its dataset; sets DATASET (fsbench's prefix).
generate() {
	local c=$1
	dlio "$c" "$work/out/$c-dlio-gen" 2 True
	fsbench "$c" "$work/out/$c-fsbench-gen" --keep --epochs 1 --dataset-files "$(files "$c")" \
		--samples-per-file 1 --sample-size "$(sample_size "$c")" --sample-size-stdev 0
	DATASET=$(sed -n 's/.*train on it again with --dataset \([^ )]*\).*/\1/p' "$work/out/$c-fsbench-gen/stderr.log")
	[ -n "$DATASET" ] || { echo "$name: fsbench kept no dataset ($c): $(tail -2 "$work/out/$c-fsbench-gen/stderr.log")" >&2; exit 1; }
}

# run TOOL CASE N PAIR: one timed training run; prints its line.
run() {
	local tool=$1 c=$2 n=$3 p=$4 out load m0 m1 t0 t1 au secs bytes
	out="$work/out/$c-$tool-$n-$p"
	load=$(cut -d' ' -f1 /proc/loadavg) m0=$(minio_cpu) t0=$(date +%s.%N)
	if [ "$tool" = dlio ]; then
		dlio "$c" "$out" "$n" False "${TIMED[@]}" "$out"
		au=$("$PY" -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["metric"]["train_au_mean_percentage"])' "$out/summary.json")
		secs=$("$PY" - "$out" <<-'EOF'
			import glob, json, sys
			epochs = {}
			for f in glob.glob(sys.argv[1] + "/*_per_epoch_stats.json"):
			    for e, v in json.load(open(f)).items():
			        epochs[e] = max(epochs.get(e, 0.0), float(v["duration"]))
			print("%.2f" % sum(epochs.values()))
		EOF
		)
	else
		fsbench "$c" "$out" --dataset "$DATASET" -p "$n"
		au=$("$PY" -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["training"]["au_pct"])' "$out/result.json")
		secs=$("$PY" -c 'import json,sys; print("%.2f" % [p for p in json.load(open(sys.argv[1]))["phases"] if p["name"] == "train"][0]["seconds"])' "$out/result.json")
	fi
	t1=$(date +%s.%N) m1=$(minio_cpu)
	read -r cpu rmax rsum <<<"$(usage "$out")"
	# Samples read: every sample once an epoch.
	bytes=$(awk -v f="$(files "$c")" -v s="$(sample_size "$c")" -v e="$EPOCHS" 'BEGIN { print f * s * e }')
	printf '%-8s %-7s %4s %4s %7s %8s %8s %8s %8s %7s %7s %7s %6.0f %5s\n' "$c" "$tool" "$p" "$n" "$au" "$cpu" \
		"$(awk -v c="$cpu" -v b="$bytes" 'BEGIN { printf "%.2f", c / (b / 2^30) }')" \
		"$rmax" "$rsum" "$(awk -v a="$m0" -v b="$m1" 'BEGIN { printf "%.1f", b - a }')" "$secs" \
		"$(awk -v t="$secs" -v b="$bytes" 'BEGIN { printf "%.0f", b / 2^20 / t }')" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$load" | tee -a "$work/out/runs.txt"
}

echo "$name: DLIO $("$PY" -c 'import importlib.metadata as m; print(m.version("dlio-benchmark"))') (s3torchconnector $("$PY" -c 'import importlib.metadata as m; print(m.version("s3torchconnector"))')) vs fsbench $("$FSBENCH" --version | awk '{print $2}'); MinIO at $MINIO_ADDR, data in $work/minio; $EPOCHS epochs; $PAIRS pairs; $(nproc) cores, $(free -g | awk '/^Mem/{print $2}') GiB"
mkdir -p "$work/out"
printf '%-8s %-7s %4s %4s %7s %8s %8s %8s %8s %7s %7s %7s %6s %5s\n' case tool pair acc "AU%" "CPU s" "CPU/GiB" "RSS max" "RSS sum" "MinIO s" "train s" "MiB/s" "wall s" load | tee "$work/out/runs.txt"
for c in $CASES; do
	generate "$c"
	for p in $(seq "$PAIRS"); do
		for n in $ACCELERATORS; do
			# The tool that goes first changes every pair.
			if [ $((p % 2)) = 1 ]; then order="dlio fsbench"; else order="fsbench dlio"; fi
			for tool in $order; do run "$tool" "$c" "$n" "$p"; done
		done
	done
done
echo "medians (AU >= 90% counts as passing):"
"$PY" - "$work/out/runs.txt" <<-'EOF'
	import statistics, sys
	rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
	groups = {}
	for r in rows:
	    groups.setdefault((r[0], r[1], int(r[3])), []).append(r)
	print("%-8s %-7s %4s %5s %7s %8s %8s %8s %8s %8s %7s %6s" % ("case", "tool", "acc", "runs", "AU%", "passing", "CPU s", "CPU/GiB", "RSS max", "RSS sum", "MiB/s", "load"))
	for (c, t, n), rs in sorted(groups.items()):
	    med = lambda i: statistics.median(float(r[i]) for r in rs)
	    ok = sum(float(r[4]) >= 90 for r in rs)
	    print("%-8s %-7s %4d %5d %7.2f %8s %8.1f %8.2f %8.0f %8.0f %7.0f %6.1f" % (c, t, n, len(rs), med(4), "%d/%d" % (ok, len(rs)), med(5), med(6), med(7), med(8), med(11), med(13)))
EOF
