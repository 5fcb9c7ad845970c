"""Change points of fsbench's E-Divisive beside MongoDB's on the same series.

history-mongodb.sh runs this in a virtual environment with
signal-processing-algorithms installed from PyPI.

  python3 history_mongodb.py synth DIR        write synthetic results to DIR
  python3 history_mongodb.py compare JSON     compare `fsbench history show -o json`

compare reads each figure's values and fsbench's change points from the
JSON, runs MongoDB's e_divisive on the same values (the same p-value and
number of permutations) and prints one line per figure: both sets of
change points and whether they agree (every change point of one within
one run of one of the other).
"""

import json
import os
import random
import sys
from datetime import datetime, timedelta, timezone


def synth(out):
    """Synthetic results: 10 series with a 10% step at run 20 of 40,
    10 without (noise of 3% standard deviation)."""
    rng = random.Random(1)
    t0 = datetime(2026, 12, 1, tzinfo=timezone.utc)
    os.makedirs(out, exist_ok=True)
    for s in range(20):
        for i in range(40):
            v = 100 + rng.gauss(0, 3)
            if s < 10 and i >= 20:
                v *= 0.9
            res = {
                "schema_version": 3, "tool": "fsbench", "version": "synthetic", "command": "bench",
                "started_at": (t0 + timedelta(hours=i)).isoformat().replace("+00:00", "Z"),
                "host": {"name": "synthetic", "os": "linux", "arch": "amd64", "cpus": 2},
                "target": {"path": "/synthetic/%s-%02d" % ("step" if s < 10 else "flat", s)},
                "parameters": {"threads": 1},
                "phases": [{"name": "read", "title": "read", "ops": 1, "items": 1, "bytes": 1, "errors": 0,
                            "seconds": 1, "bytes_per_sec": 0, "ops_per_sec": 0, "items_per_sec": 0,
                            "value": {"value": v, "unit": "MiB/s"}, "cost": {"value": 0, "unit": "s/file"},
                            "latency_of": "1 MiB read", "latency": {"count": 0}}],
                "usage": {"seconds": 1, "cpu_percent": 0, "peak_rss_bytes": 0},
            }
            with open(os.path.join(out, "s%02d-r%02d.json" % (s, i)), "w") as f:
                json.dump(res, f)


def agree(a, b):
    return all(any(abs(x - y) <= 1 for y in b) for x in a) and all(any(abs(x - y) <= 1 for y in a) for x in b)


def compare(path, pvalue, permutations):
    from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

    with open(path) as f:
        series = json.load(f)
    rows, same = 0, 0
    print("%-14s %-12s %5s  %-20s %-20s %s" % ("SERIES", "FIGURE", "RUNS", "FSBENCH", "MONGODB", "AGREE"))
    for s in series:
        for fig in s["figures"]:
            ours = [c["index"] for c in fig["changes"]]
            theirs = sorted(e_divisive(fig["values"], pvalue=pvalue, permutations=permutations))
            ok = agree(ours, theirs)
            rows += 1
            same += ok
            print("%-14s %-12s %5d  %-20s %-20s %s" % (s["series"], fig["figure"], len(fig["values"]),
                                                     ours, theirs, "yes" if ok else "NO"))
    print("%d of %d figures agree" % (same, rows))


if __name__ == "__main__":
    if sys.argv[1] == "synth":
        synth(sys.argv[2])
    else:
        compare(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))
