#!/usr/bin/env python3
"""Makes the embedded tiny pipeline's VAE: diffusers' AutoencoderKLFlux2 at tiny geometry with
seeded random weights, saved with save_pretrained in bf16 (as the published FLUX.2 VAE is).

Everything the FLUX.2 VAE has is kept (4 down and up stages, 2 and 3 resnets each, channel
changes with shortcut convs, downsample and upsample convs, mid-block attention, quant and
post-quant convs, 32 latent channels, batch-norm statistics over 2x2 patches); only widths shrink.
The decoder's widths differ from the encoder's, as in BFL's small decoder, so both are read from
the config. Weights are drawn with unit-scale fan-in so activations stay O(1) through the stack,
q/k sharper than default so the attention is far from uniform, and non-trivial norm affines and
batch-norm statistics.

Usage: python3 python/tiny/make_vae.py [--out tests/data/tiny-pipeline/vae]
       python3 python/tiny/make_vae.py --flux2 --out /tmp/flux2-vae-random   (never committed)
"""
import argparse
import math
import pathlib

import torch
from diffusers import AutoencoderKLFlux2

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent

TINY = dict(block_out_channels=(8, 16, 16, 32), decoder_block_out_channels=(8, 16, 24, 32),
            layers_per_block=2, latent_channels=32, norm_num_groups=4, sample_size=64)


# The released FLUX.2 geometry (diffusers' defaults), for measurements with random weights.
FLUX2 = dict(sample_size=1024)


def make(seed: int = 0, geometry: dict = TINY) -> AutoencoderKLFlux2:
    torch.manual_seed(seed)
    model = AutoencoderKLFlux2(**geometry)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim >= 2:  # conv [Co, Ci, kh, kw] or linear [Co, Ci]
                fan_in = math.prod(p.shape[1:])
                std = 1.0 / math.sqrt(fan_in)
                if "to_q" in name or "to_k" in name:
                    std *= 2.5
                p.copy_(torch.randn(p.shape, generator=g) * std)
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            else:  # biases
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
        model.bn.running_mean.copy_(0.3 * torch.randn(model.bn.running_mean.shape, generator=g))
        model.bn.running_var.copy_(torch.exp(0.5 * torch.randn(model.bn.running_var.shape, generator=g)))
    return model.eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "tests/data/tiny-pipeline/vae"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--flux2", action="store_true", help="the released FLUX.2 geometry (random weights, ~168 MB)")
    args = ap.parse_args()
    model = make(args.seed, FLUX2 if args.flux2 else TINY).to(torch.bfloat16)
    model.save_pretrained(args.out, safe_serialization=True)
    n = sum(p.numel() for p in model.parameters())
    print(f"wrote {args.out}: {n} parameters")


if __name__ == "__main__":
    main()
