#!/usr/bin/env python3
"""Which of the official eager ops' extra bf16 roundings move a MOSS-Image forward away from float32:
kohakumoss's bf16 forward (each fused op rounded once) against its float32 forward on a random
transformer, then again with one op replaced by the official op-by-op rounding (the modulated norm,
the gated residual, SiTU, q/k norm + RoPE with bf16 tables), and with all four. Prints each
variant's mean cosine error over 3 inputs x 2 sigmas and its ratio to kohakumoss's.
  python3 python/tools/rounding_share.py [--folder /tmp/rounding-share] [--dim 512 --layers 16]
Needs torch and kohakumoss (pip install --no-deps kohakumoss; add tqdm, einops, safetensors); CPU.
"""
import argparse
import dataclasses
import os
import pathlib
import statistics
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "cases"))
import moss_transformer_weights as W  # noqa: E402
from moss_pipeline_case import kohaku_bf16_class  # noqa: E402
from moss_transformer_case import Kohaku  # noqa: E402

B = torch.bfloat16


def r(t):
    return t.to(B).float()


def norm_mod_official(x, weight, shift, scale, seg, eps):
    xf = x.float()
    n = r(r(xf * torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)) * weight.float())
    y = r(n * r(1.0 + scale.float().index_select(0, seg)))
    return (y + shift.float().index_select(0, seg)).to(x.dtype)


def gated_official(x, o, gate, seg, rr):
    of = o.float()
    if gate is not None:
        of = r(of * gate.float().index_select(0, seg))
    return (x.float() * rr + of).to(x.dtype)


def situ_official(x):
    u, g = x.float().chunk(2, -1)
    a = r(r(4 * r(torch.tanh(r(g / 4)))) * r(torch.sigmoid(g)))
    b = r(25 * r(torch.tanh(r(u / 25))))
    return (a * b).to(x.dtype)


def qk_official(q, k, qw, kw, pos, bands, eps):
    phase = (pos.float().unsqueeze(-1) * bands.float()).flatten(-2)
    s, c = r(phase.sin()).unsqueeze(1), r(phase.cos()).unsqueeze(1)

    def one(x, w):
        xf = x.float()
        a, b = r(r(xf * torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)) * w.float()).chunk(2, -1)
        return torch.cat((r(r(a * c) - r(b * s)), r(r(b * c) + r(a * s))), -1).to(x.dtype)
    return one(q, qw), one(k, kw)


def cos_err(a, b):
    a, b = a.double().flatten(), b.double().flatten()
    return (1 - (a @ b) / (a.norm() * b.norm())).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folder", default="/tmp/rounding-share")
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--layers", type=int, default=16)
    a = ap.parse_args()
    c = dict(dim=a.dim, num_layers=a.layers, num_heads=a.dim // 128, ffn_dim=a.dim * 11 // 4, text_dim=256,
             latent_channels=128, freq_dim=256, rope_base=10000.0)
    if not os.path.exists(os.path.join(a.folder, "config.json")):
        W.make_tiny(a.folder, 5, c)
    f32, kb = Kohaku(a.folder, "cpu"), kohaku_bf16_class()(a.folder, "cpu")
    base_ops = kb.model.ops
    cases = []
    for seed in range(3):
        torch.manual_seed(seed)
        x, rows = torch.randn(128, 16, 16), torch.randn(12, 256).to(B).float()
        for sig in (0.95, 0.5):
            cases.append((x, rows, sig, f32.whole(x, rows, sig, [])))
    official = {"rms_norm_mod": norm_mod_official, "gated_residual": gated_official, "situ_glu": situ_official,
                "qk_norm_rope": qk_official}
    variants = [("kohakumoss", {})] + [(k, {k: v}) for k, v in official.items()] + [("all four", official)]
    base = None
    for name, repl in variants:
        kb.model.bind_ops(dataclasses.replace(base_ops, **repl))
        e = statistics.mean(cos_err(kb.whole(x, rows, sig, []).float(), ref) for x, rows, sig, ref in cases)
        base = base or e
        print(f"{name:16s} cosine error {e:.3e}  x{e / base:.3f} of kohakumoss's")


if __name__ == "__main__":
    main()
