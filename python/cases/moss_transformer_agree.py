#!/usr/bin/env python3
"""Do the two public MOSS-Image references agree? The transformer forward, the sampler's schedule and
the starting noise, run side by side on one tiny random checkpoint in the official layout.

The official pipeline_moss_image.py is not public; two ports follow it:
  kohakumoss      (PyPI, torch)  its module names equal the official state-dict keys
  moss-image-mlx  (PyPI, MLX)    "mirroring the official pipeline_moss_image.py operation by operation"
What they compute, and every place they differ, is written down in docs/perf/transformer/references.md.

Installing the references (CPU, in a venv of your own; ~5 GB, torch's wheel brings CUDA libraries):
  python3 -m venv /tmp/refs-venv && . /tmp/refs-venv/bin/activate
  pip install torch numpy safetensors "mlx[cpu]" tqdm packaging
  pip install --no-deps kohakumoss moss-image-mlx
  (seen working: torch 2.15.0, mlx 0.32.4, kohakumoss 0.1.0, moss-image-mlx 0.2.0)
kohakumoss's model package needs no more than that; its sampling package pulls training code, so its
schedule.py is loaded as a file. moss-image-mlx's package imports mlx-lm, so dit.py, scheduler.py and
torch_randn.py are loaded as files. Nothing here is copied from either library.

Run: python3 python/cases/moss_transformer_agree.py [--seed 0] [--keep DIR]

What it does:
  1. Key list: the full-size (released) geometry built on torch's meta device (kohakumoss) and as lazy
     MLX arrays: names and shapes against the official pattern below; the released count is 463.
  2. A tiny random transformer (5 joint blocks, 2 text blocks, dim 64, 2 heads of 32, 4 RoPE axes of
     4 bands, ffn 96, text_dim 48, 128 latent channels, freq_dim 256) written as the release is laid
     out: config.json, two bf16 safetensors shards + diffusion_pytorch_model.safetensors.index.json,
     rope.bands in fp32. Each port loads it with its own loader, in float32.
  3. One forward on each port for latents [1, 128, 6, 5] (fp32), prompt rows [7, 48] (bf16 values) and
     three sigmas of the default schedule (first, middle, last), without and with block 2 skipped (the
     pipeline skips block 22 of 42 in its negative branch). Also a float64 run of kohakumoss (float64
     weights and ops, float64 sinusoid) as the yardstick both fp32 runs are measured against.
  4. Controls that must fail the same gate by 100x: the skip applied on one side only, shift/scale of
     the shared modulation swapped on one side, sigma one training-grid step off on one side.
  5. Schedules (sigmas for steps x shift, timesteps) and starting noise (torch.randn on a CPU generator
     against the MLX port's numpy replica) for a few seeds and sizes; the VAE hand-off (the MLX port's
     de-normalise + unpatchify against the official decode lines kohakumoss's parity probe quotes); the
     timestep sinusoid in fp32 (kohakumoss) against float64 (MLX, official) and how often that changes
     a bf16 value.
  6. Printed, not gated: both ports in bf16 as each runs for inference, against the float64 run.
Exit 0 only if every gate passes; the last line says so.

Tolerances: the two fp32 forwards do the same arithmetic in a different order (kohakumoss fuses norm,
modulation and residual into one fp32 expression, MLX runs them op by op), so they may differ by fp32
rounding only. Gate: the worst element's |difference| / max|velocity| <= 1e-5 and the Frobenius
relative difference <= 1e-5 (~85 fp32 ulps; each port's measured distance from float64 is printed and
is ~1e-6 here), with the kohakumoss sinusoid replaced by the float64 one so both compute the same
function. The ports as shipped differ also in the sinusoid (fp32 vs float64: up to ~6e-5 absolute on
the embedding at t = 1000); that comparison is gated at 1e-4 and printed. A real disagreement (a
swapped chunk, a wrong position, a skipped block) moves the velocity by 1e-2 or more relative: the
controls show it. The schedule and the torch noise must be bit-identical; the MLX replica of torch's
randn must be within 1e-5 absolute (its docstring: ~2e-6, libm rounding).
"""
import argparse
import importlib.util
import json
import pathlib
import sys
import tempfile

import numpy as np
import torch
from safetensors.torch import save_file

from moss_transformer_weights import official_shapes  # the one key table

import mlx.core as mx
from mlx.utils import tree_flatten

import kohakumoss
import kohakumoss.model.backbone as k_backbone
from kohakumoss.model.io.load import load_backbone
from kohakumoss.types.arch import MossArchConfig
from kohakumoss.types.seqinfo import build_seqinfo

FORWARD_TOL = 1e-5          # both ports computing the same function in fp32
SHIPPED_TOL = 1e-4          # as shipped: kohakumoss's fp32 sinusoid against the float64 one
NOISE_TOL = 1e-5            # MLX's numpy replica of torch's CPU randn
CONTROL_FACTOR = 100        # a planted fault must exceed the gate by this factor

TINY = dict(dim=64, num_layers=5, num_heads=2, ffn_dim=96, text_dim=48, latent_channels=128,
            freq_dim=256, rope_base=10000.0)
SKIP = 2                    # the tiny model's skipped block (the released model skips 22 of 42)
RELEASED = dict(dim=3072, num_layers=42, num_heads=24, ffn_dim=8192, text_dim=4096, latent_channels=128,
                freq_dim=256, rope_base=10000.0)
INDEX = "diffusion_pytorch_model.safetensors.index.json"


def load_file_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mlx_modules():  # dit, scheduler, torch_randn, vae
    spec = importlib.util.find_spec("moss_image_mlx")  # finds the folder without running __init__
    if spec is None:
        sys.exit("moss_transformer_agree: moss-image-mlx is not installed (see the top of this file)")
    root = pathlib.Path(spec.submodule_search_locations[0])
    return (load_file_module("mlx_moss_dit", root / "dit.py"),
            load_file_module("mlx_moss_scheduler", root / "scheduler.py"),
            load_file_module("mlx_moss_torch_randn", root / "torch_randn.py"),
            load_file_module("mlx_moss_vae", root / "vae.py"))


def kohaku_schedule():
    root = pathlib.Path(kohakumoss.__path__[0])
    return load_file_module("kohaku_moss_schedule", root / "diffusion" / "sampling" / "schedule.py")


# ---------------------------------------------------------------------------------------------------
# The official key pattern (written from the spec, checked against both ports)

def arch(c, skip=()):
    return MossArchConfig(dim=c["dim"], depth=c["num_layers"], heads=c["num_heads"], ffn_dim=c["ffn_dim"],
                          text_dim=c["text_dim"], latent_channels=c["latent_channels"], freq_dim=c["freq_dim"],
                          rope_base=c["rope_base"], negative_skip_layers=tuple(skip))


def check_keys(dit):
    """Released geometry: kohakumoss on meta, MLX lazily (no weight memory); names and shapes."""
    want = official_shapes(RELEASED)
    meta = k_backbone.MossBackbone(arch(RELEASED), device="meta").state_dict()
    kohaku = {k: tuple(v.shape) for k, v in meta.items()}
    mlx_model = dit.MOSSImageTransformer(**RELEASED)
    mlx = {k.replace("time_embedding.1.", "time_embedding.2."): tuple(v.shape)
           for k, v in tree_flatten(mlx_model.parameters())}
    params = sum(int(np.prod(v)) for v in want.values())
    ok = kohaku == want and mlx == {k: v for k, v in want.items() if k != "rope.bands"}
    print(f"keys  released geometry: official pattern {len(want)} tensors, {params:,} values "
          f"(bf16 {2 * (params - 16) + 4 * 16:,} bytes); kohakumoss {len(kohaku)}; "
          f"MLX {len(mlx)} (+ rope.bands, derived, dropped at load)  -> {'ok' if ok else 'MISMATCH'}")
    if not ok:
        for name, got in (("kohakumoss", kohaku), ("MLX", mlx)):
            diff = sorted(set(got.items()) ^ set(want.items()))
            print(f"      {name} differs on {diff[:6]}")
    return ok


# ---------------------------------------------------------------------------------------------------
# A tiny random checkpoint in the official layout

def bf16(t):
    return t.to(torch.bfloat16).to(torch.float32)


def make_checkpoint(folder, c, seed):
    """Random weights with magnitudes that make every path matter (modulation of order 1, SiTU inputs
    reaching its tanh knees), stored like the release: bf16 shards, rope.bands fp32."""
    g = torch.Generator().manual_seed(seed)
    state = {}
    for key, shape in official_shapes(c).items():
        if key == "rope.bands":
            n = shape[0]
            state[key] = 1.0 / c["rope_base"] ** (torch.arange(n, dtype=torch.float32) / n)
            continue
        if "norm" in key.split(".")[-2]:  # norm1, norm2, q_norm, k_norm, final_norm_video
            t = 1.0 + 0.2 * torch.randn(shape, generator=g)
        elif key.endswith(".bias"):
            t = 0.3 * torch.randn(shape, generator=g)
        else:
            gain = {"ffn_up_gate": 6.0, "ffn_up": 6.0, "ffn_gate": 3.0, "shared_block_modulation": 0.5,
                    "video_head_modulation": 0.5}.get(key.split(".")[-2], 1.0)
            t = gain / shape[1] ** 0.5 * torch.randn(shape, generator=g)
        state[key] = t.to(torch.bfloat16)
    folder.mkdir(parents=True, exist_ok=True)
    keys = list(state)
    shards = [keys[: len(keys) // 2], keys[len(keys) // 2:]]
    weight_map = {}
    for i, part in enumerate(shards, 1):
        name = f"diffusion_pytorch_model-{i:05d}-of-{len(shards):05d}.safetensors"
        save_file({k: state[k].contiguous() for k in part}, str(folder / name))
        weight_map.update({k: name for k in part})
    total = sum(t.numel() * t.element_size() for t in state.values())
    (folder / INDEX).write_text(json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}))
    (folder / "config.json").write_text(json.dumps({"_class_name": "MOSSImageTransformer", **c}, indent=1))
    return state


# ---------------------------------------------------------------------------------------------------
# The forwards

def sinusoid_f64(t, freq_dim):
    """[cos | sin] of t * 10000^(-k/half) in float64, t widened from its fp32 value (as the MLX port
    and, by its account, the official code compute it)."""
    half = freq_dim // 2
    freq = 10000.0 ** (-torch.arange(half, dtype=torch.float64) / half)
    phase = t.double()[:, None] * freq
    return torch.cat((phase.cos(), phase.sin()), -1)


class Kohaku:
    """kohakumoss's backbone, one sample; `sinusoid` None keeps its own fp32 sinusoid."""

    def __init__(self, folder, dtype, skip):
        self.model, report = load_backbone(folder, device="cpu", dtype=dtype, keep_fp32=())
        assert report.ok and report.derived == [], (report.missing, report.unexpected, report.derived)
        self.model.requires_grad_(False)
        self.dtype = dtype
        self.forwards = {(): self.model.bind_forward(), (skip,): self.model.bind_forward((skip,))}

    def __call__(self, latents, rows, sigma, skip=(), sinusoid=None):
        _, c, h, w = latents.shape
        seq = build_seqinfo(torch.tensor([[h, w]]), torch.tensor([rows.shape[0]]))
        img = latents[0].flatten(1).T.to(self.dtype)
        saved = k_backbone.timestep_embedding
        if sinusoid is not None:
            k_backbone.timestep_embedding = lambda t, dim: sinusoid(t, dim).to(self.dtype)
        try:
            with torch.no_grad():
                out = self.forwards[tuple(skip)](img, rows.to(self.dtype), torch.tensor([sigma]), seq)
        finally:
            k_backbone.timestep_embedding = saved
        return out.T.reshape(1, c, h, w).double()


class Mlx:
    def __init__(self, dit, folder, swap_shift_scale=False):
        self.model = dit.load_transformer(folder, dtype=mx.float32)
        if swap_shift_scale:  # a planted fault: the attention part's shift and scale chunks exchanged
            lin = self.model.shared_block_modulation
            d = lin.weight.shape[1]
            order = mx.concatenate([mx.arange(d, 2 * d), mx.arange(0, d), mx.arange(2 * d, 6 * d)])
            lin.weight, lin.bias = lin.weight[order], lin.bias[order]

    def __call__(self, latents, rows, sigma, skip=()):
        t = float(np.float32(sigma) * np.float32(1000))  # the pipeline's timestep: fp32(sigma * 1000)
        out = self.model(mx.array(latents.numpy()), t, mx.array(rows.numpy())[None], list(skip))
        return torch.from_numpy(np.array(out.astype(mx.float32))).double()


def distance(a, b):
    """(worst |a - b| / max|b|, ||a - b|| / ||b||)."""
    d = (a - b).abs()
    return (d.max() / b.abs().max()).item(), ((a - b).norm() / b.norm()).item()


def forward_agreement(dit, folder, c, sigmas, seed):
    g = torch.Generator().manual_seed(seed + 1)
    h, w, L = 6, 5, 7
    latents = torch.randn((1, c["latent_channels"], h, w), generator=g)
    rows = bf16(torch.randn((L, c["text_dim"]), generator=g) * 2.0)
    k32 = Kohaku(folder, torch.float32, SKIP)
    k64 = Kohaku(folder, torch.float64, SKIP)
    mlx = Mlx(dit, folder)
    mlx_swapped = Mlx(dit, folder, swap_shift_scale=True)
    print(f"\nforward  tiny {json.dumps(c)}; latents {list(latents.shape)}, rows [{L}, {c['text_dim']}], "
          f"skip block {SKIP}; gate {FORWARD_TOL:g} (same function), {SHIPPED_TOL:g} (as shipped)")
    print(f"  {'sigma':>9} {'skip':>4} | {'MLX vs kohaku(f64 sin)':>24} | {'MLX vs kohaku shipped':>24} | "
          f"{'MLX vs f64':>20} | {'kohaku vs f64':>20} | max|v|")
    ok = True
    worst = [0.0, 0.0]
    for sigma in sigmas:
        for skip in ((), (SKIP,)):
            ref = k64(latents, rows, sigma, skip, sinusoid=sinusoid_f64)
            m = mlx(latents, rows, sigma, skip)
            k_same = k32(latents, rows, sigma, skip, sinusoid=lambda t, dim: sinusoid_f64(t, dim).float())
            k_ship = k32(latents, rows, sigma, skip)
            same, ship = distance(m, k_same), distance(m, k_ship)
            m64, k64d = distance(m, ref), distance(k_same, ref)
            good = max(same) <= FORWARD_TOL and max(ship) <= SHIPPED_TOL and torch.isfinite(m).all()
            ok &= bool(good)
            worst = [max(worst[0], max(same)), max(worst[1], max(ship))]
            print(f"  {sigma:9.6f} {SKIP if skip else '-':>4} | {same[0]:10.2e} {same[1]:10.2e}   | "
                  f"{ship[0]:10.2e} {ship[1]:10.2e}   | {m64[0]:9.2e} {m64[1]:9.2e} | "
                  f"{k64d[0]:9.2e} {k64d[1]:9.2e} | {ref.abs().max().item():.3g}{'' if good else '  FAIL'}")
    # controls: each must exceed the gate by CONTROL_FACTOR
    sigma = sigmas[len(sigmas) // 2]
    same = lambda t, dim: sinusoid_f64(t, dim).float()  # noqa: E731
    controls = {
        "skip on one side only": distance(mlx(latents, rows, sigma, (SKIP,)), k32(latents, rows, sigma, (), same)),
        "shift/scale swapped": distance(mlx_swapped(latents, rows, sigma), k32(latents, rows, sigma, (), same)),
        "sigma one grid step off": distance(mlx(latents, rows, sigma - 1e-3), k32(latents, rows, sigma, (), same)),
    }
    for name, (worst_el, frob) in controls.items():
        red = worst_el > CONTROL_FACTOR * FORWARD_TOL
        ok &= red
        print(f"  control {name:<24} {worst_el:9.2e} {frob:9.2e}  {'red as planted' if red else 'MISSED'}")
    bf16_rows(dit, folder, latents, rows, sigma, k64)
    return ok, worst


def bf16_rows(dit, folder, latents, rows, sigma, k64):
    """Printed, not gated: each port in bf16 as it runs for inference (MLX: the checkpoint's bf16, every op
    rounding like torch eager; kohakumoss: bf16 trunk under torch.autocast, conditioning linears kept in
    fp32, fused fp32 epilogues), measured against the float64 yardstick."""
    mlx16 = Mlx(dit, folder)
    mlx16.model = dit.load_transformer(folder)  # stored dtype: bf16
    k16 = Kohaku(folder, torch.bfloat16, SKIP)
    k16.model, _ = load_backbone(folder, device="cpu", dtype=torch.bfloat16)  # default keep_fp32
    k16.forwards = {(): k16.model.bind_forward(), (SKIP,): k16.model.bind_forward((SKIP,))}
    for skip in ((), (SKIP,)):
        ref = k64(latents, rows, sigma, skip, sinusoid=sinusoid_f64)
        m = mlx16(latents, rows, sigma, skip)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            k = k16(latents, rows, sigma, skip)
        print(f"  bf16 (printed) sigma {sigma:.3f} skip {SKIP if skip else '-'}: MLX vs f64 "
              "{:.2e} {:.2e}; kohakumoss vs f64 {:.2e} {:.2e}; MLX vs kohakumoss {:.2e} {:.2e}".format(
                  *distance(m, ref), *distance(k, ref), *distance(m, k)))


# ---------------------------------------------------------------------------------------------------
# Sampler pieces

def schedule_agreement(sched_mlx, sched_kohaku):
    ok = True
    rows = []
    for steps in (1, 2, 3, 4, 7, 10, 20, 28, 30, 50, 64, 100, 250, 1000):
        for shift in (1.0, 3.0, 5.0, 7.5):
            a = sched_kohaku.moss_sigmas(steps, shift).numpy()
            b = sched_mlx.sigmas_for(steps, shift)
            same = a.dtype == b.dtype == np.float32 and a.shape == b.shape and np.array_equal(a, b)
            t_a = (torch.from_numpy(a[:-1]) * 1000).numpy()  # the official timesteps: sigma * 1000 in fp32
            same &= np.array_equal(t_a, sched_mlx.timesteps_for(b))
            ok &= bool(same)
            if not same:
                rows.append(f"steps {steps} shift {shift}: {a[:6]} vs {b[:6]}")
    default = sched_mlx.sigmas_for(50, 5.0)
    print(f"\nschedule  56 (steps, shift) pairs, steps 1..1000, shift 1..7.5: "
          f"{'bit-identical' if ok else 'DIFFER'} (sigmas and timesteps)")
    for r in rows[:5]:
        print("  ", r)
    print(f"  default 50 steps, shift 5: {len(default) - 1} steps after repeats are dropped; sigmas "
          f"{', '.join(f'{s:.6g}' for s in default[:4])}, ..., {', '.join(f'{s:.6g}' for s in default[-4:])}")
    print(f"  float32 hex of the first / last nonzero: {np.float32(default[0]).view(np.uint32):#010x} / "
          f"{np.float32(default[-2]).view(np.uint32):#010x}; timesteps {sched_mlx.timesteps_for(default)[:3]} ...")
    return ok, default


def noise_agreement(randn_mlx):
    ok = True
    print("\nnoise  torch.randn(shape, generator=torch.Generator().manual_seed(seed)) (CPU, fp32) against the "
          "MLX replica")
    for seed, (h, w) in ((0, (6, 5)), (42, (64, 64)), (123456789, (48, 80)), (2**32 + 7, (8, 8))):
        shape = (1, 128, h, w)
        g = torch.Generator().manual_seed(seed)
        ref = torch.randn(shape, generator=g)
        again = torch.randn(shape, generator=torch.Generator("cpu").manual_seed(seed))  # kohakumoss on cpu
        low = torch.randn(shape, generator=torch.Generator().manual_seed(seed & 0xFFFFFFFF))
        try:
            rep = torch.from_numpy(randn_mlx.randn(shape, seed))
            note = ""
        except ValueError:  # the replica seeds numpy's MT19937, which takes < 2^32; torch keeps the low 32 bits
            rep = torch.from_numpy(randn_mlx.randn(shape, seed & 0xFFFFFFFF))
            note = " (replica refuses seeds >= 2^32; torch uses the low 32 bits, given to the replica here)"
        worst = (rep - ref).abs().max().item()
        good = torch.equal(ref, again) and torch.equal(ref, low) and worst <= NOISE_TOL
        ok &= good
        print(f"  seed {seed:>10} {list(shape)}: max |diff| {worst:.2e}{note}{'' if good else '  FAIL'}")
    return ok


def vae_handoff(vae_mlx):
    """The MLX port's decode_packed with post_quant_conv and the decoder stubbed to identity, against the
    official decode lines as kohakumoss's parity probe quotes them: z * sqrt(bn.running_var + eps) +
    bn.running_mean per channel, reshape (b, c/4, 2, 2, h, w), permute (0, 1, 4, 2, 5, 3), reshape
    (b, c/4, 2h, 2w), then vae.decode (post_quant_conv, decoder) and clamp(-1, 1)."""
    vae = vae_mlx.VAEDecoder(dict(latent_channels=32, decoder_block_out_channels=[8, 8], layers_per_block=1,
                                  norm_num_groups=4, batch_norm_eps=1e-4))
    vae.decoder = vae.post_quant_conv = lambda z: z
    g = torch.Generator().manual_seed(3)
    mean, var = 0.1 * torch.randn(128, generator=g), 0.01 + 0.2 * torch.rand(128, generator=g)
    vae.running_mean, vae.running_var = mx.array(mean.numpy()), mx.array(var.numpy())
    x = 0.5 * torch.randn((1, 128, 3, 4), generator=g)
    got = torch.from_numpy(np.array(vae.decode_packed(mx.array(x.numpy()))))  # NHWC
    z = x * (var + 1e-4).sqrt().view(1, -1, 1, 1) + mean.view(1, -1, 1, 1)
    b, c, h, w = z.shape
    z = z.reshape(b, c // 4, 2, 2, h, w).permute(0, 1, 4, 2, 5, 3).reshape(b, c // 4, 2 * h, 2 * w)
    ok = torch.equal(got, z.clamp(-1, 1).permute(0, 2, 3, 1))
    print(f"\nvae hand-off  MLX decode_packed (decoder stubbed) vs the official lines: "
          f"{'bit-identical' if ok else 'DIFFER'}; channel c*4 + dy*2 + dx -> pixel (2y+dy, 2x+dx) of channel c")
    return ok


def sinusoid_in_bf16(timesteps, freq_dim):
    """How often kohakumoss's fp32 sinusoid rounds to another bf16 value than the float64 one does
    (torch's float64 -> bf16 cast goes through fp32, as the MLX port's does)."""
    t = torch.from_numpy(np.asarray(timesteps, dtype=np.float32))
    f32 = k_backbone.timestep_embedding(t, freq_dim)
    f64 = sinusoid_f64(t, freq_dim)
    worst = (f32.double() - f64).abs().max().item()
    via = f64.float().to(torch.bfloat16)
    assert torch.equal(via, f64.to(torch.bfloat16))
    flips = (f32.to(torch.bfloat16) != via).sum().item()
    total = f32.numel()
    print(f"\nsinusoid  fp32 (kohakumoss) vs float64 (MLX, official), the default schedule's "
          f"{len(timesteps)} timesteps x {freq_dim}: max |diff| {worst:.2e}; in bf16 "
          f"{flips} of {total} values differ ({100 * flips / total:.2f}%), each by one bf16 ulp")
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", help="write the tiny checkpoint here and keep it")
    args = ap.parse_args()
    torch.set_num_threads(1)
    dit, sched_mlx, randn_mlx, vae_mlx = mlx_modules()
    sched_kohaku = kohaku_schedule()
    print(f"torch {torch.__version__}, mlx {mx.__version__} ({mx.default_device()}), "
          f"kohakumoss {getattr(kohakumoss, '__version__', '?')}")
    ok_keys = check_keys(dit)
    ok_sched, default = schedule_agreement(sched_mlx, sched_kohaku)
    ok_noise = noise_agreement(randn_mlx)
    ok_vae = vae_handoff(vae_mlx)
    sinusoid_in_bf16(sched_mlx.timesteps_for(default), 256)
    sigmas = [float(default[0]), float(default[len(default) // 2]), float(default[-2])]
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(args.keep or tmp) / "transformer"
        make_checkpoint(folder, TINY, args.seed)
        ok_fwd, worst = forward_agreement(dit, folder, TINY, sigmas, args.seed)
    ok = ok_keys and ok_sched and ok_noise and ok_vae and ok_fwd
    print(f"\nSUMMARY keys {'ok' if ok_keys else 'FAIL'}; schedule {'ok' if ok_sched else 'FAIL'}; "
          f"noise {'ok' if ok_noise else 'FAIL'}; vae hand-off {'ok' if ok_vae else 'FAIL'}; "
          f"forward {'ok' if ok_fwd else 'FAIL'} (worst "
          f"{worst[0]:.2e} same function, {worst[1]:.2e} as shipped) -> {'AGREE' if ok else 'DISAGREE'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
