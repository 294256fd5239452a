#!/usr/bin/env python3
"""A random MOSS-Image text encoder written fast on a GPU machine (torch.randn on the device), in the
release's layout: the tensor list, config and folder shape come from python/make_random_checkpoint.py
(the numpy writer, which is correct but slow at 15.9 GB); only the random numbers are made here.

  make_checkpoint_gpu.py --out DIR [--layers N]   # released geometry, N layers (default 32)
"""
import argparse
import importlib.util
import json
import os
import sys
import time

import torch
from safetensors.torch import save_file

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
spec = importlib.util.spec_from_file_location("mrc", os.path.join(ROOT, "python", "make_random_checkpoint.py"))
mrc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mrc)


def make(shape, init, gen):
    kind, arg = init
    x = torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32)
    if kind == "normal":
        return x * arg
    if kind == "fan_in":
        return x * (1.0 / arg ** 0.5)
    if kind == "dt_bias":
        return x * 0.5 + 1.0
    if kind == "A_log":
        u = torch.rand(shape, generator=gen, device="cuda", dtype=torch.float32)
        return torch.log(0.5 + 7.5 * u)
    if kind == "one_plus":
        return 1.0 + x * arg
    raise ValueError(kind)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--shard-gb", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    g = dict(mrc.RELEASED)
    g["num_hidden_layers"] = args.layers
    te = os.path.join(args.out, "text_encoder")
    os.makedirs(te, exist_ok=True)
    with open(os.path.join(te, "config.json"), "w") as f:
        json.dump(mrc.config_json(g), f, indent=1)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed)
    t0 = time.time()
    items = mrc.tensors(g)
    shards = mrc.group_shards(items, args.shard_gb * 1e9)
    weight_map, total = {}, 0
    for i, group in enumerate(shards):
        fname = mrc.shard_name(i, len(shards))
        out = {}
        for name, dtype, shape, init in group:
            x = make(tuple(shape), init, gen)
            x = x.to(torch.bfloat16) if dtype == "BF16" else x
            out["model.language_model." + name] = x.cpu()
            weight_map["model.language_model." + name] = fname
            total += x.numel() * x.element_size()
        save_file(out, os.path.join(te, fname), metadata={"format": "pt"})
        print(f"  {fname}: {len(group)} tensors", file=sys.stderr, flush=True)
    with open(os.path.join(te, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=1, sort_keys=True)
    mrc.write_tokenizer_and_index(args.out, os.path.join(ROOT, "tests", "data", "qwen3-tokenizer.json.gz"))
    print(f"{args.out}: {total / 1e9:.2f} GB of random weights ({args.layers} layers) in {time.time() - t0:.1f} s",
          file=sys.stderr)


if __name__ == "__main__":
    main()
