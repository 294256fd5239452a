#!/usr/bin/env python3
"""The README's speed table and plot from one GPU run of bench/encoder_vs_torch/run.sh and
bench/vae_vs_torch (ours and torch timed in the same run on the same weights):

  speed_summary.py --encoder DIR --vae DIR [--transformer DIR] [--plot speed.png]

DIR for the encoder holds ours.jsonl and torch.jsonl (run.sh's OUT); for the VAE ours.jsonl and
torch.json (vae_vs_torch's WORK_DIR); for the transformer ours.jsonl and torch.jsonl
(bench/transformer_vs_torch's OUT; its rows follow the others, the plot leaves them out). Prints a markdown table (medians, torch's best / ours) and,
with --plot, draws ms against prompt tokens and against picture size, ours and torch."""
import argparse
import json
import os
import sys


def json_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def encoder_rows(d):
    """{tokens: {impl: median_ms}} for single prompts (the pair case apart), and the pair's."""
    rows, pair = {}, {}
    for r in json_lines(os.path.join(d, "ours.jsonl")) + json_lines(os.path.join(d, "torch.jsonl")):
        if r.get("impl") == "setup" or "median_ms" not in r:
            continue
        if str(r["case"]) == str(r["tokens"]):
            rows.setdefault(r["tokens"], {})[r["impl"]] = r["median_ms"]
        else:
            pair.setdefault(r["case"], {})[r["impl"]] = r["median_ms"]
    return rows, pair


def vae_rows(d):
    """{(what, size): {impl: median_ms}} with diffusers' precisions as impls; the device line."""
    rows = {}
    for r in json_lines(os.path.join(d, "ours.jsonl")):
        rows.setdefault((r["what"], r["size"]), {})["tensorfold"] = r["median_ms"]
    with open(os.path.join(d, "torch.json")) as f:
        t = json.load(f)
    for r in t["runs"]:
        if "median_ms" in r:
            rows.setdefault((r["what"], r["size"]), {})["diffusers-" + r["precision"]] = r["median_ms"]
    return rows, t.get("device", "?")


def transformer_rows(d):
    """{(kind, size): {impl: median_ms}}: forwards and guidance steps, ours and torch eager / compile."""
    rows = {}
    for r in json_lines(os.path.join(d, "ours.jsonl")) + json_lines(os.path.join(d, "torch.jsonl")):
        if r.get("kind") in ("forward", "guidance") and "median_ms" in r:
            rows.setdefault((r["kind"], r["size"]), {})[r["impl"]] = r["median_ms"]
    return rows


def best_torch(d, prefix):
    ts = [v for k, v in d.items() if k.startswith(prefix)]
    return min(ts) if ts else None


def fmt(x):
    return "-" if x is None else f"{x:.2f}"


def table(enc, pair, vae, tr=None):
    out = ["| component | input | ours ms | torch ms (best of its modes) | torch / ours |", "|---|---|---|---|---|"]
    for n in sorted(enc):
        ours, torch = enc[n].get("tensorfold"), best_torch(enc[n], "torch-")
        ratio = f"{torch / ours:.1f}x" if ours and torch else "-"
        out.append(f"| prompt encoder | {n} tokens | {fmt(ours)} | {fmt(torch)} (transformers bf16) | {ratio} |")
    for case in sorted(pair):
        ours, torch = pair[case].get("tensorfold"), best_torch(pair[case], "torch-")
        ratio = f"{torch / ours:.1f}x" if ours and torch else "-"
        out.append(f"| prompt encoder | {case} | {fmt(ours)} | {fmt(torch)} (transformers bf16) | {ratio} |")
    for (what, size) in sorted(vae, key=lambda k: (k[0] != "encode", k[1])):
        d = vae[(what, size)]
        ours, bf16, fp32 = d.get("tensorfold"), d.get("diffusers-bf16"), d.get("diffusers-fp32")
        ratio = f"{bf16 / ours:.1f}x bf16, {fp32 / ours:.1f}x fp32" if ours and bf16 and fp32 else "-"
        out.append(f"| FLUX.2 VAE {what} | {size}x{size} | {fmt(ours)} | {fmt(bf16)} bf16, {fmt(fp32)} fp32 (diffusers) | {ratio} |")
    for (kind, size) in sorted(tr or {}, key=lambda k: (k[1], k[0] != "forward")):
        d = tr[(kind, size)]
        ours, eager, comp = d.get("tensorfold"), d.get("torch-eager"), d.get("torch-compile")
        ratios = [f"{t / ours:.2f}x {n}" for t, n in ((eager, "eager"), (comp, "compile")) if ours and t]
        what = "forward" if kind == "forward" else "guidance step"
        out.append(f"| MOSS-Image transformer {what} | {size}x{size} | {fmt(ours)} | {fmt(eager)} eager, {fmt(comp)} "
                   f"compile (kohakumoss bf16) | {', '.join(ratios) or '-'} |")
    return "\n".join(out)


def plot(enc, vae, device, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    ns = sorted(enc)
    for impl, style, label in (("tensorfold", "o-", "TensorFold"), ("torch-eager", "s--", "transformers eager"),
                               ("torch-sdpa", "^--", "transformers sdpa")):
        pts = [(n, enc[n][impl]) for n in ns if impl in enc[n]]
        if pts:
            a.plot(*zip(*pts), style, label=label)
    a.set(xscale="log", yscale="log", xlabel="prompt tokens", ylabel="ms", title="MOSS-Image prompt encoder (bf16)")
    a.legend()
    for what, color in (("encode", "tab:blue"), ("decode", "tab:orange")):
        for impl, style, label in (("tensorfold", "o-", "TensorFold"), ("diffusers-bf16", "s--", "diffusers bf16"),
                                   ("diffusers-fp32", "^:", "diffusers fp32")):
            pts = sorted((s, d[impl]) for (w, s), d in vae.items() if w == what and impl in d)
            if pts:
                b.plot(*zip(*pts), style, color=color, label=f"{what}: {label}")
    b.set(xscale="log", yscale="log", xlabel="picture side (px, square)", ylabel="ms",
          title="FLUX.2 VAE (ours fp32-class)")
    sizes = sorted({s for (_, s) in vae})
    b.set_xticks(sizes, [str(s) for s in sizes])
    b.minorticks_off()
    b.legend(fontsize=7)
    fig.suptitle(f"one {device}: ours and torch timed in the same run (medians)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--encoder", required=True)
    ap.add_argument("--vae", required=True)
    ap.add_argument("--transformer")
    ap.add_argument("--plot")
    a = ap.parse_args()
    try:
        enc, pair = encoder_rows(a.encoder)
        vae, device = vae_rows(a.vae)
        tr = transformer_rows(a.transformer) if a.transformer else None
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"speed_summary: {e}")
    if not enc or not vae:
        sys.exit(f"speed_summary: no timings in {a.encoder if not enc else a.vae}")
    print(table(enc, pair, vae, tr))
    if a.plot:
        plot(enc, vae, device, a.plot)
        print(f"wrote {a.plot}", file=sys.stderr)


if __name__ == "__main__":
    main()
