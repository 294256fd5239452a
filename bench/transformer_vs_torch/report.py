#!/usr/bin/env python3
"""Joins bench_transformer_timer's and torch_timer.py's JSON lines into one table per picture size:
forward and guidance-step medians of ours, torch eager and torch.compile, torch's time over ours,
and each one's TFLOP/s and share of the bf16 matrix-product rate measured in the same run.

  report.py ours.jsonl torch.jsonl

FLOPs (multiply-adds x 2) of one forward at N = h*w + L tokens, D = dim, F = ffn_dim, T = text_dim,
C = latent_channels, Q = freq_dim:
  joint block   2 N (4 D^2 + 3 F D) + 4 N^2 D   (q, k, v, o; ffn_up_gate 2F, ffn_down; q k^T and p v)
  text block    2 L (4 D^2 + 3 F D) + 4 L^2 D   (qkv, proj; ffn_gate, ffn_up, ffn_down; attention)
  embeddings    2 L T D + 2 h w C D (text_embedder.proj, video_embedder), head 2 h w D C,
                time path 2 (Q D + D^2 + 8 D^2) (time MLP, shared and head modulations)
  forward       embeddings + text_blocks text blocks + layers joint blocks
  guidance step the cond forward (L = --text) + the uncond forward (L = --uncond-text) without its
                skipped block: the work the official pipeline does, counted the same for every
                implementation whatever it computes.
"""
import json
import sys

IMPLS = ("tensorfold", "torch-eager", "torch-compile")


def joint_flops(n, d, f):
    return 2 * n * (4 * d * d + 3 * f * d) + 4 * n * n * d


def forward_flops(g, hw, length, skipped=0):
    d, f = g["dim"], g["ffn_dim"]
    embed = 2 * length * g["text_dim"] * d + 2 * hw * g["latent_channels"] * d
    head = 2 * hw * d * g["latent_channels"]
    time = 2 * (g["freq_dim"] * d + d * d + 8 * d * d)
    text = g["text_blocks"] * joint_flops(length, d, f)  # a text block does a joint block's products
    return embed + head + time + text + (g["layers"] - skipped) * joint_flops(hw + length, d, f)


def flops(g, row):
    hw = row["h"] * row["w"]
    if row["kind"] == "forward":
        return forward_flops(g, hw, row["text"])
    return forward_flops(g, hw, row["text"]) + forward_flops(g, hw, row["uncond_text"], skipped=1)


def read(paths):
    rows, meta = {}, {}
    for path in paths:
        try:
            lines = open(path).read().splitlines()
        except OSError as e:
            sys.exit(f"report.py: cannot read {path}: {e.strerror}")
        for line in lines:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r["kind"] in ("load", "matmul"):
                meta[(r["impl"], r["kind"])] = r
            elif r["kind"] == "compile":
                meta[("compile", r["size"])] = r
            else:
                rows.setdefault(r["size"], {}).setdefault(r["kind"], {})[r["impl"]] = r
    return rows, meta


def geometry(meta):
    for impl in ("tensorfold", "torch"):
        if (impl, "load") in meta:
            return meta[(impl, "load")]
    sys.exit("report.py: no load line (bench_transformer_timer's or torch_timer.py's) gives the geometry")


def cell(r):
    if r is None:
        return "-"
    if "median_ms" in r:
        return f"{r['median_ms']:.2f}"
    return "skipped" if "skipped" in r else "error"


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: report.py ours.jsonl torch.jsonl")
    rows, meta = read(sys.argv[1:])
    g = geometry(meta)
    mm = meta.get(("torch", "matmul"))
    roof = mm["tflops"] if mm else None
    ours, torch_load = meta.get(("tensorfold", "load")), meta.get(("torch", "load"))
    print(f"geometry: dim {g['dim']}, {g['layers']} layers, {g['heads']} heads, ffn {g['ffn_dim']}, "
          f"text_dim {g['text_dim']}, {g['text_blocks']} text blocks, {g['latent_channels']} latent channels")
    if ours:
        print(f"ours: {ours['device']}; checkpoint {ours['checkpoint_bytes'] / 1e9:.2f} GB loaded in "
              f"{ours['load_s']:.2f} s")
    if torch_load:
        print(f"torch {torch_load['torch']}, kohakumoss {torch_load['kohakumoss']} bf16 "
              f"(attention {torch_load.get('attention', '?')}): loaded in {torch_load['load_s']:.2f} s")
    if roof:
        print(f"bf16 matrix product {mm['n']}^3: {roof:.3g} TFLOP/s (median, torch.mm, same run)")
    for size in sorted(rows):
        c = meta.get(("compile", size))
        note = ""
        if c:
            note = (f"; compile {c['compile_s']:.1f} s ({c['graphs']} graphs, {c['graph_breaks']} breaks)"
                    if "compile_s" in c else f"; compile failed: {c.get('error', '')[:120]}")
        any_row = next(iter(next(iter(rows[size].values())).values()))
        print(f"\n{size}x{size} (latents {any_row.get('h', size // 16)}x{any_row.get('w', size // 16)}){note}")
        print(f"{'what':<10} {'ours ms':>9} {'eager ms':>9} {'compile ms':>10} {'eager/ours':>10} "
              f"{'compile/ours':>12} {'GFLOP':>8}  TFLOP/s (share of the matrix rate): ours, eager, compile")
        for kind in ("forward", "guidance", "guidance_device_loop"):
            if kind not in rows[size]:
                continue
            d = rows[size].get(kind, {})
            timed = {i: d[i] for i in IMPLS if i in d and "median_ms" in d[i]}
            ref = next(iter(timed.values()), None)
            work = flops(g, ref) if ref else None
            ratio = lambda i: (f"{timed[i]['median_ms'] / timed['tensorfold']['median_ms']:.2f}x"
                               if i in timed and "tensorfold" in timed else "-")
            rates = []
            for i in IMPLS:
                if i not in timed or not work:
                    rates.append("-")
                    continue
                tf = work / (timed[i]["median_ms"] * 1e-3) / 1e12
                rates.append(f"{tf:.3g} ({100 * tf / roof:.0f}%)" if roof else f"{tf:.3g}")
            gflop = f"{work / 1e9:.1f}" if work else "-"
            label = {"guidance_device_loop": "step, loop"}.get(kind, kind)  # the sampler's step on the device
            print(f"{label:<10} {cell(d.get('tensorfold')):>9} {cell(d.get('torch-eager')):>9} "
                  f"{cell(d.get('torch-compile')):>10} {ratio('torch-eager'):>10} {ratio('torch-compile'):>12} "
                  f"{gflop:>8}  {', '.join(rates)}")
        bad = [f"{i} {k}: {r['nonfinite']} non-finite" for k, d in rows[size].items() for i, r in d.items()
               if r.get("nonfinite")] + [f"ours {k}: repeat differs" for k, d in rows[size].items()
                                          if d.get("tensorfold", {}).get("repeat_identical") is False]
        if bad:
            print("  " + "; ".join(bad))


if __name__ == "__main__":
    main()
