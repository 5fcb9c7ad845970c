#!/usr/bin/env python3
"""freeze.py PID SHARE [PERIOD]: slows process PID by stopping it (SIGSTOP)
for SHARE of the wall-clock time, in slices of PERIOD seconds (default
0.02), until it is gone or this is terminated (then it is continued).

The stopped time is kept at SHARE of the time elapsed as a whole, so a
late wake-up of this process is made up in the next slice: every stretch
of a few periods is slowed by SHARE, whatever the machine's load. With
SHARE 0.3 the process does in any second what it would do in 0.7 s: its
throughput is 70% of what it would have been, its own noise kept.
"""
import os
import signal
import sys
import time


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: freeze.py PID SHARE [PERIOD]")
    pid, share = int(sys.argv[1]), float(sys.argv[2])
    period = float(sys.argv[3]) if len(sys.argv) == 4 else 0.02
    if not 0 < share < 1 or period <= 0:
        sys.exit("freeze.py: SHARE is between 0 and 1, PERIOD above 0")

    def done(*_):
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        sys.exit(0)

    signal.signal(signal.SIGTERM, done)
    signal.signal(signal.SIGINT, done)
    t0, frozen = time.monotonic(), 0.0
    while True:
        time.sleep(period * (1 - share))
        stop = time.monotonic()
        try:
            os.kill(pid, signal.SIGSTOP)
        except ProcessLookupError:
            return
        # Stopped until frozen + (t - stop) = share * (t - t0), at least
        # to the end of this slice's share.
        until = max((stop - frozen - share * t0) / (1 - share), stop + period * share / 4)
        time.sleep(max(until - time.monotonic(), 0))
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            return
        frozen += time.monotonic() - stop


main()
