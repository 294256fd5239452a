#!/usr/bin/env python3
"""A/B of TensorFold's encoder forward on one GPU: bench_encoder_timer run for each variant, the
variants alternated for several rounds in one process tree (so every variant meets the same machine
state), then per case the median over rounds of each variant's medians, its difference to the
first variant, and whether its output hash matches the first variant's (the same bytes).

A variant is NAME, NAME:ENV=V[,ENV2=V2...], NAME:@/path/to/bench_encoder_timer or both
(NAME:ENV=V@/path): environment assignments for that run and another binary.
Usage: encoder_ab.py --bench BIN --model DIR [--counts 10,34,63,75,127] [--pair 75,10] [--reps 15]
                     [--rounds 2] VARIANT [VARIANT ...]"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def parse_variant(text):
    name, _, rest = text.partition(":")
    if not name:
        sys.exit(f"encoder_ab: variant {text!r} has no name (NAME, NAME:ENV=V, NAME:@BIN)")
    env_part, _, binary = rest.partition("@")
    env = {}
    for item in filter(None, env_part.split(",")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            sys.exit(f"encoder_ab: variant {text!r}: {item!r} is not ENV=VALUE")
        env[key] = value
    return name, env, binary or None


def run_once(binary, env, args):
    cmd = [binary, "--model", args.model, "--counts", args.counts, "--pair", args.pair, "--reps", str(args.reps)]
    try:
        p = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True)
    except OSError as e:
        return {}, [f"{binary}: {e.strerror}"]
    cases, errors = {}, []
    for line in p.stdout.splitlines():
        if line.startswith("{") and '"case"' in line:
            d = json.loads(line)
            cases[d["case"]] = (d["median_ms"], d["out_hash"], d["repeat_identical"])
    for line in p.stderr.splitlines():
        if "error" in line.lower():
            errors.append(line.strip())
    if p.returncode != 0 and not errors:
        errors.append(f"exit {p.returncode}")
    return cases, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--counts", default="10,34,63,75,127")
    ap.add_argument("--pair", default="75,10")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("variants", nargs="+")
    a = ap.parse_args()
    if a.rounds < 1 or a.reps < 1:
        sys.exit("encoder_ab: --rounds and --reps must be 1 or more")
    variants = [parse_variant(v) for v in a.variants]
    names = [v[0] for v in variants]
    if len(set(names)) != len(names):
        sys.exit("encoder_ab: variant names must differ")
    got = {n: [] for n in names}  # name -> [cases per round]
    failed = False
    for r in range(a.rounds):
        for name, env, binary in variants:
            cases, errors = run_once(binary or a.bench, env, a)
            shown = " | ".join(f"{c}: {ms:.3f} {h[:6]}{'' if same else ' REPEAT-DIFFERS'}"
                               for c, (ms, h, same) in cases.items())
            print(f"round {r + 1} {name}: {shown}" + ("" if not errors else f"  ERRORS: {'; '.join(errors)}"))
            failed |= bool(errors) or not cases
            got[name].append(cases)
    base = names[0]
    order = list(dict.fromkeys(c for rounds in got.values() for cases in rounds for c in cases))
    print(f"\nmedian over {a.rounds} rounds, ms (difference to {base}; '!=' marks an output hash unlike {base}'s)")
    print(f"{'case':>12s} " + " ".join(f"{n:>22s}" for n in names))
    for c in order:
        ref = [cases[c][0] for cases in got[base] if c in cases]
        ref_ms = statistics.median(ref) if ref else None
        ref_hash = next((cases[c][1] for cases in got[base] if c in cases), None)
        cells = []
        for n in names:
            vals = [cases[c][0] for cases in got[n] if c in cases]
            hashes = {cases[c][1] for cases in got[n] if c in cases}
            if not vals:
                cells.append(f"{'-':>22s}")
                continue
            ms = statistics.median(vals)
            diff = "" if n == base or ref_ms is None else f" ({ms - ref_ms:+.3f})"
            mark = "" if hashes == {ref_hash} else " !="
            cells.append(f"{f'{ms:.3f}{diff}{mark}':>22s}")
        print(f"{c:>12s} " + " ".join(cells))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
