#!/usr/bin/env python3
"""Where one kernel's issue slots and stalls go, from Nsight Compute's source page: the stall reasons'
shares, the instructions executed per opcode (divided by --per, e.g. warps x tokens to get a count a
token a warp), and the instructions with the most stall samples.
Make the CSV on the GPU machine (ncu runs the SMs at its own clocks, so read shares, not times):
  ncu --kernel-name regex:NAME --launch-skip 2 --launch-count 1 --set full --import-source no -o rep BIN ARGS
  ncu --import rep.ncu-rep --page source --print-source sass --csv > sass.csv
Usage: ncu_source_stalls.py sass.csv [--per N] [--top 20]"""
import argparse
import collections
import csv
import sys


def opcode(source):
    words = source.split()
    if not words:
        return ""
    op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
    return op.split(".")[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--per", type=float, default=1.0, help="divide instruction counts by this")
    ap.add_argument("--top", type=int, default=20)
    a = ap.parse_args()
    with open(a.csv, newline="") as f:
        rows = list(csv.reader(f))
    # the first line names the kernel; the second is the header
    header_at = next((i for i, r in enumerate(rows) if "Source" in r and "# Samples" in r), None)
    if header_at is None:
        sys.exit(f"ncu_source_stalls: {a.csv} has no 'Source' and '# Samples' columns "
                 "(expected ncu --page source --print-source sass --csv)")
    header = rows[header_at]
    col = {h: i for i, h in enumerate(header)}
    stall_cols = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    data = [r for r in rows[header_at + 1:] if len(r) == len(header)]

    def num(r, h):
        try:
            return float(r[col[h]] or 0)
        except ValueError:
            return 0.0

    stalls = collections.Counter()
    executed = collections.Counter()
    samples = collections.Counter()
    for r in data:
        op = opcode(r[col["Source"]])
        executed[op] += num(r, "Instructions Executed")
        samples[op] += num(r, "# Samples")
        for h in stall_cols:
            stalls[h] += num(r, h)
    total_exec = sum(executed.values())
    total_stall = sum(stalls.values()) or 1.0
    print(f"{len(data)} instructions in the kernel; {total_exec:.0f} executed "
          f"({total_exec / a.per:.1f} per --per unit)")
    print("stall reasons (share of samples):")
    for h, v in stalls.most_common():
        if v:
            print(f"  {h[6:]:22s} {100 * v / total_stall:5.1f}%")
    print("executed per opcode (per --per unit), stall samples:")
    for op, n in executed.most_common(a.top):
        print(f"  {op:10s} {n / a.per:10.1f}   {samples[op]:7.0f}")
    print(f"the {a.top} instructions with the most samples:")
    hot = sorted(data, key=lambda r: -num(r, "# Samples"))[: a.top]
    for r in hot:
        top2 = sorted(((num(r, h), h[6:]) for h in stall_cols), reverse=True)[:2]
        why = ", ".join(f"{h} {v:.0f}" for v, h in top2 if v)
        print(f"  {num(r, '# Samples'):6.0f}  {r[col['Source']].strip()[:64]:64s} {why}")


if __name__ == "__main__":
    main()
