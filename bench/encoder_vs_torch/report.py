#!/usr/bin/env python3
"""Joins bench_encoder_timer's and torch_timer.py's JSON lines into one table: medians, the ratio of
torch's best to ours, tokens/s, and ours against the weight-streaming floor measured in the same run."""
import json
import sys


def main():
    rows, setup = {}, None
    for path in sys.argv[1:]:
        for line in open(path):
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r["impl"] == "setup":
                setup = r
                continue
            rows.setdefault((r["tokens"], r["case"]), {})[r["impl"]] = r
    if setup and setup["copy_bw"] > 0:
        bw = setup["copy_bw"]
        floor_all = setup["weight_bytes"] / bw * 1e3
        floor_streamed = (setup["weight_bytes"] - setup["embed_bytes"]) / bw * 1e3
        print(f"device: {setup['device']}; device copy {bw / 1e12:.2f} TB/s (read + write)")
        print(f"weights {setup['weight_bytes'] / 1e9:.2f} GB: floor {floor_all:.2f} ms "
              f"(all weights / copy bandwidth); {floor_streamed:.2f} ms without the embedding table (only its rows are read)")
        cat_rate = setup["shard_bytes"] / setup["cat_s"] / 1e9
        load_rate = setup["shard_bytes"] / setup["load_s"] / 1e9
        print(f"load: cat {cat_rate:.2f} GB/s, ours (whole Encoder::load) {load_rate:.2f} GB/s = "
              f"{100 * load_rate / cat_rate:.0f}% of cat")
    else:
        floor_all = None
    hdr = f"{'case':>12} {'tokens':>6} {'ours ms':>9} {'eager ms':>9} {'sdpa ms':>9} {'torch/ours':>10} {'ours tok/s':>10} {'ours/floor':>10} {'repeat':>6} {'inf/nan':>7}"
    print(hdr)
    for (n, name), d in sorted(rows.items()):
        ours = d.get("tensorfold", {}).get("median_ms")
        eager = d.get("torch-eager", {}).get("median_ms")
        sdpa = d.get("torch-sdpa", {}).get("median_ms")
        best = min([x for x in (eager, sdpa) if x is not None], default=None)
        f = lambda x: f"{x:9.2f}" if x is not None else f"{'-':>9}"
        ratio = f"{best / ours:10.1f}" if ours and best else f"{'-':>10}"
        tps = f"{n / ours * 1e3:10.0f}" if ours else f"{'-':>10}"
        fl = f"{ours / floor_all:10.2f}" if ours and floor_all else f"{'-':>10}"
        rep = d.get("tensorfold", {}).get("repeat_identical")
        bad = d.get("tensorfold", {}).get("nonfinite", "-")  # output values that are inf or NaN
        print(f"{name:>12} {n:6d} {f(ours)} {f(eager)} {f(sdpa)} {ratio} {tps} {fl} {str(rep):>6} {str(bad):>7}")


if __name__ == "__main__":
    main()
