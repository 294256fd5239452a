#!/usr/bin/env python3
"""Where a recorded forward's GPU time goes between kernels: reads kernel_timeline.cpp's CSV, takes
each graph launch (a run of kernels with the same nonzero graph id) and prints its span, the kernels'
busy time, the idle gaps between them, and per kernel name: count, time, mean gap after it.
With --eager, kernels launched one by one: a run ends at an idle gap of over 2 ms (one forward each).
Usage: kernel_gaps.py kernels.csv [--last N] [--eager]"""
import argparse
import collections
import csv
import re
import sys


def short(name):
    name = re.sub(r"\(.*", "", name.replace("(anonymous namespace)", "anon"))  # arguments
    name = name.replace("void ", "")
    base = re.sub(r"<.*", "", name).split("::")[-1]
    targs = re.search(r"<(.*)>", name)
    return base + (f"<{targs.group(1)}>" if targs else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--last", type=int, default=2)
    ap.add_argument("--eager", action="store_true", help="runs of kernels launched one by one, split at 2 ms gaps")
    a = ap.parse_args()
    with open(a.csv) as f:
        rows = csv.DictReader(f)
        want = {"start_ns", "end_ns", "graph_id", "name"}
        if not want <= set(rows.fieldnames or []):
            sys.exit(f"kernel_gaps: {a.csv} has columns {rows.fieldnames}, expected {sorted(want)} "
                     "(kernel_timeline.cpp's CSV)")
        ev = [(int(r["start_ns"]), int(r["end_ns"]), int(r["graph_id"]), short(r["name"])) for r in rows]
    ev.sort()
    runs = []
    for e in ev:
        if a.eager:
            if runs and e[0] - runs[-1][-1][1] < 2_000_000:
                runs[-1].append(e)
            else:
                runs.append([e])
        elif e[2] and runs and runs[-1][-1][2] == e[2] and e[0] - runs[-1][-1][1] < 100_000:
            runs[-1].append(e)
        elif e[2]:
            runs.append([e])
    if not runs:
        sys.exit(f"kernel_gaps: no graph-launched kernels in {a.csv} ({len(ev)} records)")
    print(f"{len(ev)} records, {len(runs)} graph launches of {sorted(set(len(r) for r in runs))} kernels")
    for r in runs[-a.last:]:
        span = r[-1][1] - r[0][0]
        busy = sum(e[1] - e[0] for e in r)
        gaps = [max(0, r[i + 1][0] - r[i][1]) for i in range(len(r) - 1)]
        print(f"\nlaunch: {len(r)} kernels, span {span / 1e3:.1f} us, busy {busy / 1e3:.1f} us, "
              f"gaps {sum(gaps) / 1e3:.1f} us (median {sorted(gaps)[len(gaps) // 2] / 1e3:.2f} us)")
        hist = collections.Counter(min(g // 500, 8) for g in gaps)
        print("  gaps in 0.5 us bins (last: 4 us and more):", [hist[i] for i in range(9)])
        by = collections.defaultdict(lambda: [0, 0, 0])
        for i, e in enumerate(r):
            by[e[3]][0] += 1
            by[e[3]][1] += e[1] - e[0]
            if i < len(gaps):
                by[e[3]][2] += gaps[i]
        print(f"  {'kernel':60s} {'n':>4s} {'us each':>8s} {'us':>8s} {'gap after':>9s}")
        for k, (n, d, g) in sorted(by.items(), key=lambda x: -x[1][1]):
            print(f"  {k[:60]:60s} {n:4d} {d / n / 1e3:8.2f} {d / 1e3:8.1f} {g / n / 1e3:9.2f}")


if __name__ == "__main__":
    main()
