#!/usr/bin/env python3
"""bench/cuda/ncu_source_stalls.py on a small hand-made source-page CSV: stall shares, instructions
per opcode (predicated ones under their opcode, divided by --per), the hottest instructions, and a
CSV without the source page's columns refused by name."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "..", "bench", "cuda", "ncu_source_stalls.py")

CSV = '''"Kernel Name","gated_delta_rule_kernel"
"Address","Source","Instructions Executed","# Samples","stall_wait","stall_selected","stall_wait (Not Issued)"
"0x10","FFMA R1, R2, R3, R1","300","30","20","10","99"
"0x20","@P0 FFMA.FTZ R4, R2, R3, R4","100","10","0","10","99"
"0x30","LDS.128 R8, [R9]","200","60","40","20","99"
"0x40","SHFL.BFLY PT, R5, R4, 0x8, 0x1f","0","0","0","0","0"
'''


def run(args):
    return subprocess.run([sys.executable, TOOL] + args, capture_output=True, text=True)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sass.csv")
        with open(path, "w") as f:
            f.write(CSV)
        p = run([path, "--per", "100", "--top", "2"])
        out = p.stdout
        expect = [
            "4 instructions in the kernel; 600 executed (6.0 per --per unit)",
            "wait                    60.0%",  # 60 of 100 samples, the "Not Issued" column left out
            "selected                40.0%",
            "FFMA              4.0",  # 300 + 100 predicated, over --per 100
            "LDS               2.0",
            "the 2 instructions with the most samples:",
            "LDS.128 R8, [R9]",
        ]
        if p.returncode != 0:
            failures.append(f"exit {p.returncode}: {p.stderr}")
        for e in expect:
            if e not in out:
                failures.append(f"missing {e!r}")
        hot = out.split("the 2 instructions with the most samples:")[-1]
        if "SHFL" in hot or hot.find("LDS.128") > hot.find("FFMA R1"):
            failures.append("the hottest instructions are not the two with the most samples, most first")
        bad = os.path.join(d, "bad.csv")
        with open(bad, "w") as f:
            f.write('"Kernel Name","x"\n"Address","Opcode"\n')
        p = run([bad])
        if p.returncode == 0 or "has no 'Source' and '# Samples' columns" not in p.stderr:
            failures.append(f"a CSV without the source columns: exit {p.returncode}, {p.stderr!r}")
    if failures:
        print(out)
        for f in failures:
            print("FAIL:", f)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
