"""Torch side of bench/vae_vs_torch: diffusers' AutoencoderKLFlux2 (FLUX.2 geometry, random weights
rounded to bf16 so every precision uses the same weights) timed at fp32 (TF32 off), tf32 and bf16,
encode and decode at 512^2, 1024^2, 2048^2, plus the bf16 matrix rate measured in the same run.
Medians of CUDA-event timings after warm-up. Writes JSON; optionally saves the weights for ours."""
import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_cuda_timing import cuda_event_times_ms  # noqa: E402


def bf16_matmul_tflops():
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ts = cuda_event_times_ms(lambda: a @ b, reps=10, warmup=3)
    return 2 * n**3 / (statistics.median(ts) * 1e-3) / 1e12


def timed(fn, reps):
    ts = cuda_event_times_ms(fn, reps, warmup=1)
    return statistics.median(ts), min(ts), max(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="512,1024,2048")
    ap.add_argument("--precisions", default="fp32,tf32,bf16")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", required=True)
    ap.add_argument("--save-weights", default="")
    ap.add_argument("--decoder-widths", default="", help="decoder_block_out_channels (MOSS-Image's: 96,192,384,384)")
    ap.add_argument("--what", default="encode,decode")
    args = ap.parse_args()
    from diffusers import AutoencoderKLFlux2

    torch.manual_seed(0)
    extra = {"decoder_block_out_channels": tuple(map(int, args.decoder_widths.split(",")))} if args.decoder_widths else {}
    vae = AutoencoderKLFlux2(**extra)  # FLUX.2 geometry, or its small decoder
    with torch.no_grad():
        for p in vae.parameters():
            p.copy_(p.to(torch.bfloat16).to(torch.float32))
    if args.save_weights:
        os.makedirs(args.save_weights, exist_ok=True)
        vae.to(torch.bfloat16).save_pretrained(args.save_weights)
        vae.to(torch.float32)
    vae = vae.cuda().eval()
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "bf16_matmul_tflops": bf16_matmul_tflops(), "runs": [],
              "decoder_widths": list(vae.config.decoder_block_out_channels or vae.config.block_out_channels)}
    print(f"torch {torch.__version__} on {result['device']}: bf16 matmul {result['bf16_matmul_tflops']:.0f} TFLOP/s",
          flush=True)
    for prec in args.precisions.split(","):
        torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
        torch.backends.cudnn.allow_tf32 = prec == "tf32"
        dtype = torch.bfloat16 if prec == "bf16" else torch.float32
        model = vae.to(dtype)
        for size in map(int, args.sizes.split(",")):
            x = torch.rand(1, 3, size, size, device="cuda", dtype=dtype) * 2 - 1
            z = torch.randn(1, 32, size // 8, size // 8, device="cuda", dtype=dtype)
            with torch.inference_mode():
                for what, fn in (("encode", lambda: model.encode(x).latent_dist.mode()),
                                 ("decode", lambda: model.decode(z).sample)):
                    if what not in args.what.split(","):
                        continue
                    torch.cuda.reset_peak_memory_stats()
                    try:
                        med, lo, hi = timed(fn, args.reps)
                        peak = torch.cuda.max_memory_allocated() / 2**30
                        row = {"precision": prec, "size": size, "what": what, "median_ms": med, "min_ms": lo,
                               "max_ms": hi, "peak_gib": peak}
                    except torch.OutOfMemoryError as err:
                        row = {"precision": prec, "size": size, "what": what, "error": str(err)[:200]}
                    torch.cuda.empty_cache()
                    result["runs"].append(row)
                    print(json.dumps(row), flush=True)
        vae = model.to(torch.float32)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
