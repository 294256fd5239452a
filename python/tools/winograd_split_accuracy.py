#!/usr/bin/env python3
"""How accurate a 3x3 convolution is, against float64, under two bf16 tensor-core schemes (numpy only).

direct    the VAE's scheme: weights exact in bf16, x split into bf16 hi + lo, W hi + W lo (2 products)
winograd  F(2x2, 3x3): U = B^T d B in fp32, V = G g G^T in float64, both split into bf16 hi + lo,
          M = U_hi V_hi + U_hi V_lo + U_lo V_hi (3 products over 16 positions for 4 outputs: 12 per
          output against direct's 18), Y = A^T M A in fp32

Products are exact (bf16 x bf16 fits float64) and summed in float64, then rounded to fp32, so the
difference between the schemes is their operand rounding and Winograd's transforms, not the order of
the tensor cores' sums. x is SiLU of unit normals (a GroupNorm + SiLU output), the weights unit
normals / sqrt(9 Ci) rounded to bf16 (exact, as the released weights are).

  python3 python/tools/winograd_split_accuracy.py [--channels 128] [--size 32] [--seeds 3]
"""
import argparse

import numpy as np


def bf16(x):
    """Round float32 values to bf16 (nearest even), returned as float64."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32).astype(np.float64)


def split(x):
    """fp32 x as bf16 hi + bf16 lo."""
    x32 = np.asarray(x, dtype=np.float32)
    hi = bf16(x32)
    lo = bf16((x32.astype(np.float64) - hi).astype(np.float32))
    return hi, lo


def conv_reference(x, w):
    """float64 3x3 convolution, padding 1: x [Ci, H, W], w [Co, Ci, 3, 3] -> [Co, H, W]."""
    ci, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    y = np.zeros((w.shape[0], h, wd))
    for dy in range(3):
        for dx in range(3):
            y += np.einsum("oc,chw->ohw", w[:, :, dy, dx], xp[:, dy:dy + h, dx:dx + wd])
    return y


def conv_direct_split(x, w):
    hi, lo = split(x)
    return (conv_reference(hi, w) + conv_reference(lo, w)).astype(np.float32).astype(np.float64)


B_T = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], dtype=np.float64)
G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], dtype=np.float64)
A_T = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], dtype=np.float64)


def conv_winograd_split(x, w, exact=False):
    ci, h, wd = x.shape
    assert h % 2 == 0 and wd % 2 == 0
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    th, tw = h // 2, wd // 2
    # d: [Ci, th, tw, 4, 4] input tiles, stride 2
    d = np.stack([np.stack([xp[:, 2 * i:2 * i + 4, 2 * j:2 * j + 4] for j in range(tw)], 1) for i in range(th)], 1)
    u = np.einsum("ab,ctsbe,fe->ctsaf", B_T, d, B_T)
    v = np.einsum("ab,ocbe,fe->ocaf", G, w, G)  # [Co, Ci, 4, 4], exact in float64
    if exact:  # the transforms alone, in float64: must give the direct convolution
        y = np.einsum("ab,otsbe,fe->otsaf", A_T, np.einsum("ocaf,ctsaf->otsaf", v, u), A_T)
        return y.transpose(0, 1, 3, 2, 4).reshape(w.shape[0], h, wd)
    u = u.astype(np.float32)  # adds of fp32 values, rounded once
    uh, ul = split(u)
    vh, vl = split(v)
    m = (np.einsum("ocaf,ctsaf->otsaf", vh, uh) + np.einsum("ocaf,ctsaf->otsaf", vl, uh) +
         np.einsum("ocaf,ctsaf->otsaf", vh, ul)).astype(np.float32).astype(np.float64)
    y = np.einsum("ab,otsbe,fe->otsaf", A_T, m, A_T).astype(np.float32).astype(np.float64)  # [Co, th, tw, 2, 2]
    return y.transpose(0, 1, 3, 2, 4).reshape(w.shape[0], h, wd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--channels", type=int, default=128)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--seeds", type=int, default=3)
    a = ap.parse_args()
    print(f"3x3 conv, {a.channels} -> {a.channels} channels, {a.size}^2; errors against float64, relative to the"
          " output's RMS (per output channel: the worst channel)")
    print(f"{'seed':>4} {'scheme':>9} {'rms rel':>10} {'worst channel':>14} {'max abs / rms':>14}")
    for seed in range(a.seeds):
        rng = np.random.default_rng(seed)
        z = rng.standard_normal((a.channels, a.size, a.size))
        x = (z / (1 + np.exp(-z))).astype(np.float32).astype(np.float64)
        w = bf16((rng.standard_normal((a.channels, a.channels, 3, 3)) / np.sqrt(9 * a.channels)).astype(np.float32))
        ref = conv_reference(x, w)
        rms = np.sqrt(np.mean(ref ** 2))
        transform_error = np.abs(conv_winograd_split(x, w, exact=True) - ref).max() / rms
        assert transform_error < 1e-12, f"the Winograd transforms do not give the convolution ({transform_error:.2e})"
        for name, f in (("direct", conv_direct_split), ("winograd", conv_winograd_split)):
            e = f(x, w) - ref
            per_channel = np.sqrt(np.mean(e ** 2, axis=(1, 2))) / np.sqrt(np.mean(ref ** 2, axis=(1, 2)))
            print(f"{seed:>4} {name:>9} {np.sqrt(np.mean(e ** 2)) / rms:10.3e} {per_channel.max():14.3e}"
                  f" {np.abs(e).max() / rms:14.3e}")


if __name__ == "__main__":
    main()
