#!/usr/bin/env python3
"""Writes reference cases for TensorFold's FLUX.2 VAE gate (tf-flux2-vae check).

`vae`: diffusers' AutoencoderKLFlux2 and the FLUX.2 pipeline's latent helpers. The case is
python/cases/case_writer.py's format, component "flux2_vae":
  in.image      U8  [H, W, 3]   the picture (synthetic, or --image PNG)
  in.noise      F32 [Cz, H/8, W/8]  the posterior noise (seeded normal)
  in.latents    F32 [Cz, H/8, W/8]  the decoder's input: float64's posterior sample rounded to fp32
  f32.<step>    F64  float64 torch (CPU) output of each step, each step fed by the previous step's
                    float64 output (the first by the picture, the decoder's by in.latents)
  bf16.<step>   BF16 torch bf16's output of the same step run alone on the float64 input rounded
                    to bf16 (the gate's yardstick)
  whole.picture U8  [H, W, 3]  the float64 decode as the pipeline's postprocess makes it
Steps (metadata "steps"): enc.conv_in, enc.down.0-3, enc.mid, enc.moments (norm, SiLU, conv_out,
quant_conv), tokens.sample (Idol's feature2: five zero rows then the normalised 2x2-patch tokens of
mean + std * noise), tokens.mean (the pipeline's argmax), dec.conv_in (post_quant_conv, conv_in),
dec.mid, dec.up.0-3, dec.out (norm, SiLU, conv_out).

Usage: python3 python/cases/flux2_vae_case.py vae --model DIR --height 32 --width 32 --out C.safetensors
         [--image I.png] [--seed 0] [--bf16-device cpu|cuda] [--write-png P.png] [--write-noise N.safetensors]
"""
import argparse
import json
import os
import pathlib
import sys

import numpy as np
import torch
from safetensors.torch import save_file

import diffusers
from diffusers import AutoencoderKLFlux2
from diffusers.models.autoencoders.vae import DiagonalGaussianDistribution
from diffusers.pipelines.flux2.pipeline_flux2 import Flux2Pipeline

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import CaseWriter  # noqa: E402


def vae_folder(model: str) -> pathlib.Path:
    p = pathlib.Path(model)
    if (p / "model_index.json").exists():
        return p / "vae"
    return p


def synthetic_picture(h: int, w: int, seed: int) -> np.ndarray:
    """Gradients, a disc, stripes and some noise: every channel and level range exercised."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 255 * x / max(w - 1, 1)
    g = 255 * y / max(h - 1, 1)
    b = 127.5 + 127.5 * np.sin(x / 3.0 + y / 5.0)
    disc = (x - w * 0.6) ** 2 + (y - h * 0.4) ** 2 < (min(h, w) * 0.25) ** 2
    r[disc], g[disc], b[disc] = 250, 20, 30
    pic = np.stack([r, g, b], axis=-1) + rng.normal(0, 12, (h, w, 3))
    return np.clip(np.round(pic), 0, 255).astype(np.uint8)


def picture_to_input(pic: np.ndarray, dtype) -> torch.Tensor:
    x = torch.from_numpy(pic.astype(np.float64) / 255.0).permute(2, 0, 1)[None]
    return (2.0 * x - 1.0).to(dtype)


def feature2(moments, noise, bn_mean, bn_var, eps, sample: bool):
    post = DiagonalGaussianDistribution(moments)
    z = post.mean + post.std * noise.to(moments.dtype) if sample else post.mode()
    p = Flux2Pipeline._patchify_latents(z)
    mean = bn_mean.view(1, -1, 1, 1).to(p.dtype)
    std = torch.sqrt(bn_var.view(1, -1, 1, 1) + eps).to(p.dtype)
    p = (p - mean) / std
    t = Flux2Pipeline._pack_latents(p)[0]
    return torch.cat([torch.zeros(5, t.shape[1], dtype=t.dtype), t], dim=0), z


def encoder_stages(vae):
    e = vae.encoder
    stages = [("enc.conv_in", e.conv_in)]
    for i, blk in enumerate(e.down_blocks):
        stages.append((f"enc.down.{i}", blk))
    stages.append(("enc.mid", e.mid_block))
    stages.append(("enc.moments", lambda h: vae.quant_conv(e.conv_out(e.conv_act(e.conv_norm_out(h))))))
    return stages


def decoder_stages(vae):
    d = vae.decoder
    stages = [("dec.conv_in", lambda z: d.conv_in(vae.post_quant_conv(z)))]
    stages.append(("dec.mid", d.mid_block))
    for i, blk in enumerate(d.up_blocks):
        stages.append((f"dec.up.{i}", blk))
    stages.append(("dec.out", lambda h: d.conv_out(d.conv_act(d.conv_norm_out(h)))))
    return stages


def to_picture(x: torch.Tensor) -> np.ndarray:
    img = (x[0].double() * 0.5 + 0.5).clamp(0, 1).permute(1, 2, 0).numpy()
    return (img * 255).round().astype(np.uint8)


def vae_case(args):
    folder = vae_folder(args.model)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    ref = AutoencoderKLFlux2.from_pretrained(folder, torch_dtype=torch.bfloat16).to(torch.float64).to(args.ref_device).eval()
    low = AutoencoderKLFlux2.from_pretrained(folder, torch_dtype=torch.bfloat16).to(args.bf16_device).eval()
    cfg = ref.config
    h, w = args.height, args.width
    if args.image:
        from PIL import Image
        pic = np.asarray(Image.open(args.image).convert("RGB"))
        h, w = pic.shape[0], pic.shape[1]
    else:
        pic = synthetic_picture(h, w, args.seed)
    assert h % 16 == 0 and w % 16 == 0, "sizes must be multiples of 16"
    cz = cfg.latent_channels
    noise = torch.randn((1, cz, h // 8, w // 8), generator=torch.Generator().manual_seed(args.seed + 1),
                        dtype=torch.float32)
    config = {k: v for k, v in dict(cfg).items() if not k.startswith("_")}
    case = CaseWriter("flux2_vae", {"diffusers": diffusers.__version__, "torch": torch.__version__},
                      height=str(h), width=str(w), seed=str(args.seed), bf16_device=args.bf16_device,
                      ref_device=args.ref_device, config=json.dumps(config, default=str))
    case.input("image", torch.from_numpy(pic.copy()))
    case.input("noise", noise[0].contiguous())

    def run(stages, x64):
        for name, fn in stages:
            with torch.no_grad():
                y64 = fn(x64.to(args.ref_device)).cpu()
                y16 = dict(low_stages)[name](x64.to(torch.bfloat16).to(args.bf16_device))
            case.step(name, y64[0].contiguous(), y16[0].float().cpu().to(torch.bfloat16).contiguous())
            x64 = y64
        return x64

    low_stages = encoder_stages(low) + decoder_stages(low)
    moments = run(encoder_stages(ref), picture_to_input(pic, torch.float64))
    bn_mean, bn_var, eps = ref.bn.running_mean.cpu(), ref.bn.running_var.cpu(), cfg.batch_norm_eps
    with torch.no_grad():
        f_sample, z64 = feature2(moments, noise.double(), bn_mean, bn_var, eps, True)
        f_mean, _ = feature2(moments, noise.double(), bn_mean, bn_var, eps, False)
        m16 = moments.to(torch.bfloat16)
        f16, _ = feature2(m16, noise, low.bn.running_mean.cpu(), low.bn.running_var.cpu(), eps, True)
    case.step("tokens.sample", f_sample.contiguous(), f16.to(torch.bfloat16).contiguous())
    case.step("tokens.mean", f_mean.contiguous())
    latents = z64.float()
    case.input("latents", latents[0].contiguous())
    picture = run(decoder_stages(ref), latents.double())
    case.whole("picture", torch.from_numpy(to_picture(picture).copy()))
    case.write(args.out)
    if args.write_png:
        from PIL import Image
        Image.fromarray(pic).save(args.write_png)
    if args.write_noise:
        save_file({"noise": noise[0].contiguous()}, args.write_noise)
    print(f"wrote {args.out}: {h}x{w}, {len(case.steps)} steps")


def main():
    ap = argparse.ArgumentParser(description="TensorFold reference cases for the FLUX.2 VAE")
    sub = ap.add_subparsers(dest="what", required=True)
    v = sub.add_parser("vae", help="FLUX.2 VAE case (diffusers AutoencoderKLFlux2)")
    v.add_argument("--model", required=True, help="pipeline folder or its vae/ folder")
    v.add_argument("--height", type=int, default=32)
    v.add_argument("--width", type=int, default=32)
    v.add_argument("--image", help="a PNG instead of the synthetic picture")
    v.add_argument("--seed", type=int, default=0)
    v.add_argument("--bf16-device", default="cpu")
    v.add_argument("--ref-device", default="cpu", help="where float64 runs (cuda: float64 on the GPU, for large pictures)")
    v.add_argument("--write-png")
    v.add_argument("--write-noise")
    v.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.what == "vae":
        vae_case(args)


if __name__ == "__main__":
    main()
