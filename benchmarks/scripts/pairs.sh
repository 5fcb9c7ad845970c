# Sourced by the comparisons of fsbench with a peer's own program
# (hpc-compare.sh, io500-compare.sh), not run.
#
#   alternate PAIRS OUT A B ARG...
#                             # runs the functions A and B with the ARGs
#                             # PAIRS times, their output added to OUT: A
#                             # first in odd pairs, B first in even ones
#   pair_table OUT PEER LABEL KEY...
#                             # prints, for each phase, the median of each
#                             # side's runs, their ratio with its 95%
#                             # interval (pairs drawn again: a bootstrap)
#                             # and in how many pairs fsbench's run was
#                             # the faster
#
# OUT holds a line a run and phase: the KEY columns (fs, ranks, ...), the
# tool (fsbench or PEER), the phase and its figure, tab-separated (a
# phase "NAME in UNIT" names its unit). LABEL heads the peer's column.

alternate() {
	local pairs=$1 out=$2 a=$3 b=$4 i
	shift 4
	for i in $(seq 1 "$pairs"); do
		if [ $((i % 2)) = 1 ]; then
			"$a" "$@" >>"$out"; "$b" "$@" >>"$out"
		else
			"$b" "$@" >>"$out"; "$a" "$@" >>"$out"
		fi
	done
}

pair_table() {
	python3 - "$@" <<'PY'
import sys, statistics, collections, random
out, peer, label, keys = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
v = collections.defaultdict(list)
for line in open(out):
    f = line.rstrip("\n").split("\t")
    key, tool, phase, val = tuple(f[:len(keys)]), f[len(keys)], f[len(keys) + 1], f[len(keys) + 2]
    v[(key, phase, tool)].append(float(val))
# ahead: the pairs in which fsbench's run was the faster (the i-th run of
# each side is pair i's): 3 of 6 is a tie, whatever the ratio of medians.
# 95% interval: the 2.5th to 97.5th percentiles of the ratio of medians
# over 2,000 sets of as many pairs drawn again from these (with
# replacement, from a fixed seed: the same runs give the same table). An
# interval that holds 1.00 does not tell the two sides apart; one wholly
# under 0.95 says fsbench is behind.
def spread(pairs):
    rnd, rs = random.Random(1), []
    for _ in range(2000):
        s = [rnd.choice(pairs) for _ in pairs]
        b = statistics.median(y for _, y in s)
        if b:
            rs.append(statistics.median(x for x, _ in s) / b)
    if not rs:
        return "nan"
    rs.sort()
    return "%.2f-%.2f" % (rs[int(0.025 * len(rs))], rs[int(0.975 * len(rs)) - 1])
cols = keys + ["phase", "unit", "fsbench median", label + " median", "ratio", "95% interval", "fsbench ahead"]
print("| " + " | ".join(cols) + " |")
print("|" + "---|" * len(cols))
def order(k):
    return tuple(int(x) if x.isdigit() else x for x in k[0]), k[1]
for key, phase, _ in sorted((k for k in v if k[2] == "fsbench"), key=order):
    mine, other = v[(key, phase, "fsbench")], v.get((key, phase, peer))
    if not other:
        continue
    a, b = statistics.median(mine), statistics.median(other)
    ahead = sum((x < y) if phase.startswith("CPU") else (x > y) for x, y in zip(mine, other))  # CPU: less is ahead
    unit = "GiB/s" if phase.startswith("ior") else "kIOPS"
    if " in " in phase:  # "bandwidth in MiB/s": the phase names its unit
        phase, unit = phase.split(" in ", 1)
    ratio = "%.2f" % (a / b) if b else "nan"
    pairs = list(zip(mine, other))
    print("| " + " | ".join(list(key) + [phase, unit, "%.3f" % a, "%.3f" % b, ratio, spread(pairs), "%d of %d" % (ahead, len(pairs))]) + " |")
PY
}
