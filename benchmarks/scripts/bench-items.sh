#!/usr/bin/env bash
# Runs `fsbench objbench` (its JuiceFS-style items) RUNS times against a local
# MinIO and a local nfs-ganesha, both on 127.0.0.1, with -p 4 and 256 MiB big
# objects, and prints the median of every item. With a juicefs binary
# (JUICEFS), `juicefs objbench` runs the same job in turn with it (which
# goes first alternates) and its medians and the ratios are printed beside
# fsbench's; without one, the figures juicefs objbench measured with the same
# options on the same machine class (2 vCPU; see benchmarks/records/object-peers.md) stand in,
# with the ratios to both ends of their range.
# nfs-ganesha replaces the portmapper's NFS registrations: run it where no
# other NFS server is registered. Every run holds a lock file
# (MEASURE_LOCK) so that no two timed runs on the machine overlap. Servers
# and data go away on exit.
#
# Environment: FSBENCH (default bin/fsbench), MINIO (default: minio on PATH,
# then ~/.cache/fsbench-test/bin/minio), JUICEFS (default: juicefs on PATH,
# then ~/.cache/fsbench-test/bin/juicefs; "none" for none), RUNS (default 5),
# WARMUP (runs of each tool first whose values are dropped, default 1: a
# fresh server answers its first requests slowly),
# TARGETS (default "minio nfs"), PROFILE_DIR (a directory: each fsbench run
# writes its CPU profile there, TARGET-RUN.pprof), RESULTS_FILE (also append
# every run's values there, TOOL|TARGET|ITEM|VALUE|UNIT a line),
# MEASURE_LOCK (default $TMPDIR/fsbench-measure.lock; "" for none). Needs
# root for nfs-ganesha and rpcbind.
set -euo pipefail
cd "$(dirname "$0")/../.."
. benchmarks/scripts/minio-lib.sh
FSBENCH=${FSBENCH:-bin/fsbench}
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}
TARGETS=${TARGETS:-minio nfs}
MEASURE_LOCK=${MEASURE_LOCK-${TMPDIR:-/tmp}/fsbench-measure.lock}
CACHE_BIN=${FSBENCH_TEST_BIN:-$HOME/.cache/fsbench-test/bin}
MINIO=${MINIO:-$(command -v minio 2>/dev/null || echo "$CACHE_BIN/minio")}
JUICEFS=${JUICEFS:-$(command -v juicefs 2>/dev/null || echo "$CACHE_BIN/juicefs")}
[ "$JUICEFS" != none ] && [ -x "$JUICEFS" ] || {
	[ "$JUICEFS" = none ] || echo "bench-items: juicefs not found (make peers, or JUICEFS=path): its fixed figures stand in" >&2
	JUICEFS=""
}

die() { echo "bench-items: $*" >&2; exit 1; }
[ -x "$FSBENCH" ] || die "build fsbench first (make build)"
command -v curl >/dev/null && command -v python3 >/dev/null || die "needs curl and python3"
case " $TARGETS " in *" minio "*) [ -x "$MINIO" ] || die "no MinIO server at $MINIO (make test-deps, or MINIO=path)" ;; esac
case " $TARGETS " in *" nfs "*)
	[ "$(id -u)" = 0 ] || die "nfs-ganesha needs root (or TARGETS=minio)"
	command -v ganesha.nfsd >/dev/null && command -v rpcbind >/dev/null || die "needs ganesha.nfsd and rpcbind (make test-deps)"
	;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/fsbench-items.XXXXXX")
minio_pid="" ganesha_pid="" nfs_lock_fd="" meas_fd=""
stop() { # PID: TERM, then KILL after 15 s
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null || return 0
	for _ in $(seq 150); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -9 "$1" 2>/dev/null || true
}
# unlock closes the locks' files, which releases them.
unlock() {
	[ -z "$nfs_lock_fd" ] || exec {nfs_lock_fd}>&-
	[ -z "$meas_fd" ] || exec {meas_fd}>&-
	nfs_lock_fd="" meas_fd=""
}
cleanup() {
	stop "$minio_pid"
	stop "$ganesha_pid"
	unlock
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_nfs: rpcbind (unless a portmapper answers) and nfs-ganesha with the
# tests' configuration (internal/testenv/nfs.go): NFSv3 on free ports,
# FSAL VFS on a fresh export. The tests' lock keeps test servers away
# meanwhile, as ganesha replaces the portmapper's NFS registrations.
start_nfs() {
	exec {nfs_lock_fd}>"${TMPDIR:-/tmp}/fsbench-test-nfs.lock"
	flock -w 600 "$nfs_lock_fd" || die "another NFS test server holds ${TMPDIR:-/tmp}/fsbench-test-nfs.lock"
	if ! (exec 3<>/dev/tcp/127.0.0.1/111) 2>/dev/null; then
		rpcbind -w || die "rpcbind failed"
		sleep 0.5
	fi
	NFS_EXPORT=$work/nfs/export NFS_PORT=$(free_port) NFS_MOUNT_PORT=$(free_port)
	mkdir -p "$NFS_EXPORT" "$work/nfs/recovery" && chmod 777 "$NFS_EXPORT"
	cat >"$work/nfs/ganesha.conf" <<EOF
NFS_CORE_PARAM {
	Protocols = 3, 4;
	Bind_addr = 127.0.0.1;
	NFS_Port = $NFS_PORT;
	MNT_Port = $NFS_MOUNT_PORT;
	Enable_NLM = false;
	Enable_RQUOTA = false;
}
NFSV4 {
	Graceless = true;
	RecoveryRoot = $work/nfs/recovery;
}
EXPORT {
	Export_Id = 77;
	Path = $NFS_EXPORT;
	Pseudo = $NFS_EXPORT;
	Access_Type = RW;
	Squash = No_Root_Squash;
	SecType = sys;
	FSAL { Name = VFS; }
}
EOF
	ganesha.nfsd -F -f "$work/nfs/ganesha.conf" -L "$work/nfs/ganesha.log" -p "$work/nfs/ganesha.pid" &
	ganesha_pid=$!
	NFS_URL="nfs://127.0.0.1:$NFS_PORT$NFS_EXPORT?mountport=$NFS_MOUNT_PORT"
	for _ in $(seq 300); do
		"$FSBENCH" objbench --storage nfs "$NFS_URL" --quick --skip-functional-tests -q --timeout 2s >/dev/null 2>&1 && return 0
		kill -0 "$ganesha_pid" 2>/dev/null || break
		sleep 0.2
	done
	die "nfs-ganesha did not start: $(tail -3 "$work/nfs/ganesha.log")"
}

# run_once TARGET N: one objbench run; its items' values go to the
# target's results.
run_once() {
	local target=$1 n=$2 args=(-p 4 --big-object-size 256M --skip-functional-tests --json -q)
	local env=()
	[ -z "${PROFILE_DIR:-}" ] || env=(FSBENCH_CPUPROFILE="$PROFILE_DIR/$target-$n.pprof")
	case $target in
	minio) args=(--storage minio "http://$MINIO_ADDR/items" "${args[@]}") ;;
	nfs) args=(--storage nfs "$NFS_URL" "${args[@]}") ;;
	esac
	ACCESS_KEY=${AK:-} SECRET_KEY=${SK:-} env "${env[@]}" "$FSBENCH" objbench "${args[@]}" \
		>"$work/out.json" 2>"$work/err" || die "$target run $n failed: $(tail -3 "$work/err")"
	python3 - "$work/out.json" "$target" >>"$work/results.$target" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for p in r["phases"]:
    v = p.get("value") or {}
    if v.get("unit") in ("MiB/s", "objects/s"):
        print("fsbench|%s|%s|%s|%s" % (sys.argv[2], p["name"], v["value"], v["unit"]))
PY
}

# juicefs_once TARGET N: the same job by juicefs objbench (sizes in its
# units: MiB, KiB); its table's values go to the target's results under
# fsbench's item names.
juicefs_once() {
	local target=$1 n=$2 args=(--skip-functional-tests -p 4 --big-object-size 256)
	case $target in
	minio) args=(--storage minio "http://$MINIO_ADDR/items-juicefs" "${args[@]}") ;;
	nfs) args=(--storage nfs "127.0.0.1:$NFS_EXPORT" "${args[@]}") ;;
	esac
	ACCESS_KEY=${AK:-} SECRET_KEY=${SK:-} "$JUICEFS" objbench "${args[@]}" \
		>"$work/jout" 2>"$work/err" </dev/null || die "juicefs $target run $n failed: $(tail -3 "$work/err")"
	python3 - "$work/jout" "$target" >>"$work/results.$target" <<'PY'
import sys
names = {"upload objects": "upload", "download objects": "download", "put small objects": "put-small",
         "get small objects": "get-small", "list objects": "list", "head objects": "head",
         "delete objects": "delete", "change permissions": "chmod", "change owner/group": "chown",
         "update mtime": "chtimes"}
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.split("|")]
    if len(cells) < 4 or cells[1].lower() not in names:
        continue
    v = cells[2].split()
    if len(v) == 2 and v[1] in ("MiB/s", "objects/s"):
        print("juicefs|%s|%s|%s|%s" % (sys.argv[2], names[cells[1].lower()], v[0], v[1]))
PY
}

# summary: medians per target and item, beside juicefs objbench's medians
# of the same runs (when it ran) and its fixed figures.
summary() {
	python3 - "$work/results" <<'PY'
import statistics, sys
ref = {  # juicefs objbench, -p 4, 256 MiB big object, same machine class
    ("minio", "upload"): (408, 498), ("minio", "put-small"): (828, 840),
    ("nfs", "put-small"): (1789, 1814), ("nfs", "list"): (193e3, 218e3),
    ("nfs", "download"): (1977, 2007), ("nfs", "get-small"): (5403, 5938),
}
vals, units, order = {}, {}, []
for line in open(sys.argv[1]):
    tool, t, item, v, unit = line.rstrip("\n").split("|")
    if tool == "fsbench" and (t, item) not in units:
        order.append((t, item))
        units[(t, item)] = unit
    vals.setdefault((tool, t, item), []).append(float(v))
med = lambda tool, k: statistics.median(vals[(tool,) + k]) if (tool,) + k in vals else None
fmt = "%-6s %-10s %-10s %5s %10s %10s %10s %7s %-17s %s"
print(fmt % ("target", "item", "unit", "runs", "median", "min", "juicefs", "ratio", "juicefs figures", "ratio"))
for k in order:
    xs = vals[("fsbench",) + k]
    m, j = med("fsbench", k), med("juicefs", k)
    lo_hi = ref.get(k)
    r = "-" if not lo_hi else "%.2f-%.2f" % (m / lo_hi[1], m / lo_hi[0])
    f = "-" if not lo_hi else "%g-%g" % lo_hi
    jm, jr = ("-", "-") if not j else ("%.1f" % j, "%.2f" % (m / j))
    print(fmt % (k[0], k[1], units[k], len(xs), "%.1f" % m, "%.1f" % min(xs), jm, jr, f, r))
PY
}

: >"$work/results"
for target in $TARGETS; do
	if [ -n "$MEASURE_LOCK" ]; then
		exec {meas_fd}>>"$MEASURE_LOCK"
		flock "$meas_fd"
	fi
	case $target in
	minio) start_minio bench-items ;;
	nfs) start_nfs ;;
	*) die "unknown target $target (want minio, nfs)" ;;
	esac
	echo "bench-items: $target: $WARMUP warm-up and $RUNS measured runs; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	for i in $(seq $((1 - WARMUP)) "$RUNS"); do
		if [ -z "$JUICEFS" ]; then
			run_once "$target" "$i"
		elif [ $((i % 2)) != 0 ]; then
			run_once "$target" "$i" && juicefs_once "$target" "$i"
		else
			juicefs_once "$target" "$i" && run_once "$target" "$i"
		fi
		[ "$i" -gt 0 ] || : >"$work/results.$target" # a warm-up's values are dropped
	done
	cat "$work/results.$target" >>"$work/results"
	case $target in
	minio) stop "$minio_pid"; minio_pid="" ;;
	nfs) stop "$ganesha_pid"; ganesha_pid="" ;;
	esac
	unlock
done
[ -z "${RESULTS_FILE:-}" ] || cat "$work/results" >>"$RESULTS_FILE"
summary
