#!/usr/bin/env python3
"""A random MOSS-Image transformer of the released geometry written fast on a GPU machine
(torch.randn on the device), in the release's layout: config.json and the diffusers shards
diffusion_pytorch_model-0000i-of-0000n.safetensors with their index. Key names, shapes, scales and
config.json come from python/cases/moss_transformer_weights.py (also the tiny checkpoint's writer); only
the random numbers are drawn here, so the same seed gives other values than the CPU writer would.

  make_checkpoint_gpu.py --out DIR [--layers N] [--shard-gb 5] [--seed 0] [--device cuda]
"""
import argparse
import importlib.util
import json
import os
import sys
import time

import torch
from safetensors.torch import save_file

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
spec = importlib.util.spec_from_file_location("moss_transformer_weights",
                                              os.path.join(ROOT, "python", "cases", "moss_transformer_weights.py"))
case = importlib.util.module_from_spec(spec)
spec.loader.exec_module(case)

INDEX = "diffusion_pytorch_model.safetensors.index.json"


def shard_groups(shapes, limit_bytes):
    """Keys in order, cut into groups of at most limit_bytes of BF16 (a larger tensor alone)."""
    groups, size = [[]], 0
    for key, shape in shapes.items():
        n = 2 * int(torch.Size(shape).numel())
        if groups[-1] and size + n > limit_bytes:
            groups.append([])
            size = 0
        groups[-1].append(key)
        size += n
    return groups


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="the transformer folder to write")
    ap.add_argument("--layers", type=int, default=case.RELEASED["num_layers"])
    ap.add_argument("--shard-gb", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="where the numbers are drawn")
    args = ap.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("make_checkpoint_gpu.py: --device cuda but torch sees no CUDA device")
    c = dict(case.RELEASED, num_layers=args.layers)
    shapes = case.official_shapes(c)
    os.makedirs(args.out, exist_ok=True)
    gen = torch.Generator(device=args.device).manual_seed(args.seed)
    randn = lambda shape: torch.randn(shape, generator=gen, device=args.device)  # noqa: E731
    t0 = time.time()
    groups = shard_groups(shapes, args.shard_gb * 1e9)
    weight_map, total = {}, 0
    for i, keys in enumerate(groups):
        name = f"diffusion_pytorch_model-{i + 1:05d}-of-{len(groups):05d}.safetensors"
        out = {}
        for key in keys:
            t = case.as_stored(key, case.initial_weight(key, shapes[key], randn, c["rope_base"]))
            out[key] = t.cpu()
            weight_map[key] = name
            total += t.numel() * t.element_size()
        save_file(out, os.path.join(args.out, name), metadata={"format": "pt"})
        print(f"  {name}: {len(keys)} tensors", file=sys.stderr, flush=True)
    with open(os.path.join(args.out, INDEX), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=1, sort_keys=True)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        f.write(case.config_json(c))
    print(f"{args.out}: {total / 1e9:.2f} GB of random weights ({len(shapes)} tensors, {args.layers} layers) "
          f"in {time.time() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
