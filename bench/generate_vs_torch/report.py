#!/usr/bin/env python3
"""bench/generate_vs_torch's table: the whole picture and each stage, ours against the torch pipeline.

  report.py ours-line ERR [--label ours] [--rep I]   # tf-moss-image generate's stderr -> one JSON line
  report.py table --model DIR JSONL... [--png-ours P --png-torch Q] [--target-s 8.5]

`ours-line` finds the summary line generate prints last ("picture WxH -> PNG on DEVICE: T s without loads
(encode E s, N steps S s = s/step, decode D s); loads L s (encoder a, transformer b, vae c); P + Q prompt
tokens; peak host memory M GiB; peak GPU memory: G GiB (in use now ...)", tools/tf-moss-image/generate.cpp)
and prints it as {"impl": "ours", "kind": "picture", ...}. Progress bars may share the stream (carriage
returns); fields it cannot find are left out, but the total and the size must be there.

`table` reads JSON lines of both sides (torch_pipeline.py's and ours-line's; several files, e.g. the two
calls of a split run) and prints, per implementation at the main size: loads, encode, sampling, per step,
decode, the whole picture without loads (median over reps), torch's time over ours, peak GPU memory; the
sampling stage's TFLOP/s and share of the bf16 matrix rate measured in the same run; the compile time; the
large picture's line; the PSNR of the two PNGs (informative: the same seed, both bf16).

FLOPs of a guidance step (the matrix products and the attention of the joint blocks; the text blocks, the
embeddings and the head are left out, under 1% at 1024^2): cond = B blocks at N_c = h*w + prompt tokens,
uncond = B - 1 blocks (block 22 skipped) at N_u = h*w + negative tokens, each block
2 N (4 D^2 + 3 F D) + 4 N^2 D, with D, F and B from transformer/config.json (3072, 8192, 42 released).
"""
import argparse
import json
import math
import os
import re
import statistics
import sys

NUM = r"([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)"
FIELDS = {  # name: (pattern, converter)
    "total_s": (rf"{NUM} s without loads", float),
    "encode_s": (rf"encode {NUM} s", float),
    "sampler_steps": (r"([0-9]+) steps " + NUM + " s", int),
    "sample_s": (r"[0-9]+ steps " + NUM + " s", float),
    "step_s": (rf"= {NUM} s/step", float),
    "decode_s": (rf"decode {NUM} s", float),
    "loads_s": (rf"loads {NUM} s", float),
    "load_encoder_s": (rf"encoder {NUM}", float),
    "load_transformer_s": (rf"transformer {NUM}", float),
    "load_vae_s": (rf"vae {NUM}", float),
    "prompt_tokens": (r"([0-9]+) \+ [0-9]+ prompt tokens", int),
    "negative_tokens": (r"[0-9]+ \+ ([0-9]+) prompt tokens", int),
    "peak_host_gib": (rf"peak host memory {NUM} GiB", float),
    "peak_gpu_gib": (rf"peak GPU memory:? {NUM} GiB", float),
}


def parse_summary(text):
    """The last generate summary line in `text` (a whole stderr) as a dict, or None."""
    lines = [ln.strip() for ln in re.split(r"[\r\n]+", text) if "without loads" in ln]
    if not lines:
        return None
    line = lines[-1]
    m = re.search(r"picture ([0-9]+)x([0-9]+) -> (.*?) on ([A-Za-z0-9_:]+):", line)
    if not m or not re.search(FIELDS["total_s"][0], line):
        return None
    row = dict(width=int(m.group(1)), height=int(m.group(2)), png=m.group(3), device=m.group(4))
    loads = line.split("loads", 1)[1] if "loads" in line else ""
    for name, (pat, conv) in FIELDS.items():
        where = loads if name.startswith("load_") else line  # "encoder 6.1" only inside the loads' parentheses
        f = re.search(pat, where)
        if f:
            row[name] = conv(f.group(1))
    return row


def load_rows(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            for ln in f:
                ln = ln.strip()
                if ln.startswith("{"):
                    try:
                        rows.append(json.loads(ln))
                    except json.JSONDecodeError:
                        print(f"report.py: {p}: a line is not JSON: {ln[:80]}", file=sys.stderr)
    return rows


def geometry(model):
    try:
        with open(os.path.join(model, "transformer", "config.json")) as f:
            c = json.load(f)
        return dict(dim=c["dim"], ffn=c["ffn_dim"], layers=c["num_layers"])
    except (OSError, KeyError, ValueError):
        return dict(dim=3072, ffn=8192, layers=42)


def step_flops(g, hw, prompt, negative, guidance=True):
    d, f = g["dim"], g["ffn"]

    def block(n):
        return 2 * n * (4 * d * d + 3 * f * d) + 4 * n * n * d
    total = g["layers"] * block(hw + prompt)
    if guidance:
        total += (g["layers"] - 1) * block(hw + negative)
    return total


def psnr(a, b):
    import numpy as np
    from PIL import Image
    x = np.asarray(Image.open(a).convert("RGB"), dtype=np.float64)
    y = np.asarray(Image.open(b).convert("RGB"), dtype=np.float64)
    if x.shape != y.shape:
        return None
    mse = float(np.mean((x - y) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def med(rows, key):
    vals = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
    return statistics.median(vals) if vals else None


def fmt(x, unit="", nd=3):
    if x is None:
        return "-"
    return f"{x:.{nd}f}{unit}"


def table(args):
    rows = load_rows(args.jsonl)
    g = geometry(args.model)
    pics = [r for r in rows if r.get("kind") == "picture" and "error" not in r]
    sizes = sorted({(r["width"], r["height"]) for r in pics}, key=lambda s: s[0] * s[1])
    main_size = (args.size, args.size) if args.size else (sizes[0] if sizes else None)
    mm = [r for r in rows if r.get("kind") == "matmul" and r.get("tflops")]
    rate = mm[-1]["tflops"] if mm else None
    impls = [i for i in ("ours", "torch-eager", "torch-compile") if any(r["impl"] == i for r in pics)]
    out = []
    p = out.append
    if main_size is None:
        p("no picture results")
        print("\n".join(out))
        return 1
    W, H = main_size
    at = {i: [r for r in pics if r["impl"] == i and (r["width"], r["height"]) == main_size] for i in impls}
    loads = {}
    for i in impls:
        if i == "ours":
            loads[i] = {k: med(at[i], "load_" + k + "_s") for k in ("encoder", "transformer", "vae")}
        else:
            lr = [r for r in rows if r.get("impl") == i and r.get("kind") == "load"]
            loads[i] = {k: (lr[-1].get(k + "_s") if lr else None) for k in ("encoder", "transformer", "vae")}
    steps = med(at[impls[0]], "sampler_steps") if impls else None
    steps = int(steps) if steps else None
    p(f"MOSS-Image, whole picture {W}x{H}, {steps} steps: ours (tf-moss-image generate) vs the torch pipeline "
      f"(transformers encoder + kohakumoss transformer + diffusers VAE), same folder and seed")
    dev = next((r.get("device") for r in rows if r.get("kind") == "load" and r.get("device")), None)
    if dev:
        p(f"device: {dev}; bf16 matrix rate {rate:.4g} TFLOP/s" if rate else f"device: {dev}")
    p("")
    head = f"{'stage (s, median)':<26}" + "".join(f"{i:>15}" for i in impls) + "".join(
        f"{i + '/ours':>22}" for i in impls if i != "ours" and "ours" in impls)
    p(head)
    p("-" * len(head))
    stages = [("load encoder", "encoder"), ("load transformer", "transformer"), ("load vae", "vae"),
              ("encode (both prompts)", "encode_s"), (f"sampling ({steps} steps)", "sample_s"),
              ("  per step", "step_s"), ("decode", "decode_s"), ("WHOLE picture, no loads", "total_s")]
    for label, key in stages:
        vals = {}
        for i in impls:
            vals[i] = loads[i].get(key) if key in ("encoder", "transformer", "vae") else med(at[i], key)
        line = f"{label:<26}" + "".join(f"{fmt(vals[i]):>15}" for i in impls)
        if "ours" in impls:
            for i in impls:
                if i != "ours":
                    r = vals[i] / vals["ours"] if vals[i] and vals["ours"] else None
                    line += f"{fmt(r, 'x', 2):>22}"
        p(line)
    peaks = {i: med(at[i], "peak_gpu_gib") for i in impls}
    for i in impls:
        if i != "ours" and peaks[i] is None:
            s = [r for r in rows if r.get("impl") == i and r.get("kind") == "summary"]
            peaks[i] = s[-1].get("peak_gpu_gib") if s else None
    p(f"{'peak GPU memory (GiB)':<26}" + "".join(f"{fmt(peaks[i], '', 2):>15}" for i in impls))
    reps = {i: len(at[i]) for i in impls}
    p(f"{'pictures timed':<26}" + "".join(f"{reps[i]:>15}" for i in impls))
    p("")
    hw = (W // 16) * (H // 16)
    for i in impls:
        pt, nt = med(at[i], "prompt_tokens"), med(at[i], "negative_tokens")
        st = med(at[i], "sample_s")
        if pt is None or not st or not steps:
            continue
        fl = steps * step_flops(g, hw, pt, nt or 0)
        tf = fl / st / 1e12
        share = f", {100 * tf / rate:.0f}% of the bf16 matrix rate" if rate else ""
        p(f"sampling {i}: {fl / 1e12:.4g} TFLOP ({int(pt)} + {int(nt or 0)} prompt tokens) in {st:.3f} s = "
          f"{tf:.4g} TFLOP/s{share}")
    for r in rows:
        if r.get("kind") == "compile":
            if "compile_s" in r:
                p(f"torch.compile: {r['compile_s']} s to compile (cond {r.get('cond_s')} s, uncond {r.get('uncond_s')} s; "
                  f"{r.get('graphs')} graphs, {r.get('graph_breaks')} graph breaks) at {r['width']}x{r['height']}")
            else:
                p(f"torch.compile at {r.get('width')}x{r.get('height')}: {r.get('skipped') or r.get('error')}")
    for r in rows:
        if r.get("kind") == "compile_check" and r.get("graphs_after_timed") != r.get("graphs_after_warmup"):
            p(f"torch.compile RECOMPILED during the timed pictures: {r.get('graphs_after_warmup')} graphs after the "
              f"warm-up, {r.get('graphs_after_timed')} after (its timed numbers include compiling)")
    for r in rows:
        if r.get("kind") == "vae_bf16":
            p(f"{r['impl']}: decode with the VAE in bf16 {r['decode_s']:.3f} s (the official pipeline's is fp32)")
    for (w, h) in sizes:
        if (w, h) == main_size:
            continue
        for i in impls:
            big = [r for r in pics if r["impl"] == i and (r["width"], r["height"]) == (w, h)]
            if big:
                b = big[-1]
                p(f"{i} at {w}x{h}, {b.get('sampler_steps')} steps: {fmt(b.get('total_s'), ' s')} without loads "
                  f"(encode {fmt(b.get('encode_s'))}, steps {fmt(b.get('sample_s'))} = {fmt(b.get('step_s'))} s/step, "
                  f"decode {fmt(b.get('decode_s'))}); peak GPU memory {fmt(b.get('peak_gpu_gib'), ' GiB', 2)}")
    for r in rows:
        if r.get("kind") == "picture" and "error" in r:
            p(f"{r.get('impl')} at {r.get('width')}x{r.get('height')}: FAILED: {r['error']}")
    if args.png_ours and args.png_torch and os.path.exists(args.png_ours) and os.path.exists(args.png_torch):
        v = psnr(args.png_ours, args.png_torch)
        p(f"PSNR ours vs torch eager ({os.path.basename(args.png_ours)} vs {os.path.basename(args.png_torch)}): "
          f"{'-' if v is None else ('inf' if math.isinf(v) else f'{v:.2f} dB')} (informative: both bf16, same seed)")
    if "ours" in impls and args.target_s:
        t = med(at["ours"], "total_s")
        verdict = "meets" if t is not None and t <= args.target_s else "misses"
        p(f"target: the whole picture without loads <= {args.target_s:g} s: ours {fmt(t, ' s', 2)} {verdict} it")
    print("\n".join(out))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("ours-line", help="tf-moss-image generate's stderr -> one JSON line")
    o.add_argument("err")
    o.add_argument("--label", default="ours")
    o.add_argument("--rep", type=int, default=0)
    t = sub.add_parser("table", help="the joined table")
    t.add_argument("jsonl", nargs="+")
    t.add_argument("--model", default="", help="the pipeline folder (its transformer/config.json for the FLOPs)")
    t.add_argument("--size", type=int, default=0, help="the main picture side (default: the smallest timed)")
    t.add_argument("--png-ours")
    t.add_argument("--png-torch")
    t.add_argument("--target-s", type=float, default=8.5)
    args = ap.parse_args()
    if args.cmd == "ours-line":
        with open(args.err, errors="replace") as f:
            row = parse_summary(f.read())
        if row is None:
            print(json.dumps({"impl": args.label, "kind": "picture", "rep": args.rep,
                              "error": f"no summary line in {args.err}"}))
            return 1
        print(json.dumps({"impl": args.label, "kind": "picture", "rep": args.rep, **row}))
        return 0
    return table(args)


if __name__ == "__main__":
    sys.exit(main())
