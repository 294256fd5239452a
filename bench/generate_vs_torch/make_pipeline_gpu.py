#!/usr/bin/env python3
"""A random MOSS-Image pipeline folder of the released geometry, written fast on a GPU machine:

  text_encoder/ + tokenizer/   bench/encoder_vs_torch/make_checkpoint_gpu.py (Qwen3.5 text model, 32 layers,
                               ~16 GB bf16; Qwen3's tokenizer.json from tests/data, plus its tokenizer_config.json)
  transformer/                 bench/transformer_vs_torch/make_checkpoint_gpu.py (dim 3072, 42 blocks, ~10 GB)
  vae/                         diffusers' AutoencoderKLFlux2 with the released encoder widths (128, 256, 512, 512),
                               MOSS-Image's small decoder (96, 192, 384, 384), 32 latent channels and random
                               batch-norm statistics, drawn by python/tiny/make_vae.py's make(), saved in bf16
  scheduler/scheduler_config.json, model_index.json   as tests/data/tiny-pipeline's

The two large makers run at the same time as subprocesses (each draws on the GPU and spends its time in the
host copy and the safetensors write), the VAE in this process meanwhile.

  make_pipeline_gpu.py --out DIR [--device cuda|cpu] [--parts encoder,transformer,vae,meta]
                       [--encoder-layers 32] [--transformer-layers 42] [--seed 0]

--device cpu is for testing the script on a machine without a GPU: the encoder maker draws on CUDA only, so
leave `encoder` out of --parts there (and use few --transformer-layers).
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TINY = os.path.join(ROOT, "tests", "data", "tiny-pipeline")
ENCODER_MAKER = os.path.join(ROOT, "bench", "encoder_vs_torch", "make_checkpoint_gpu.py")
TRANSFORMER_MAKER = os.path.join(ROOT, "bench", "transformer_vs_torch", "make_checkpoint_gpu.py")
VAE_MAKER = os.path.join(ROOT, "python", "tiny", "make_vae.py")
TOKENIZER_CONFIG = os.path.join(ROOT, "tests", "data", "qwen3-tokenizer_config.json")

# FLUX.2's VAE (diffusers' defaults: encoder widths 128, 256, 512, 512; 32 latent channels; 2x2 batch-norm
# patches) with MOSS-Image's small decoder
RELEASED_VAE = dict(sample_size=1024, decoder_block_out_channels=(96, 192, 384, 384))
PARTS = ("encoder", "transformer", "vae", "meta")


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_vae(out, seed):
    import torch
    make_vae = load_module("make_vae", VAE_MAKER)
    model = make_vae.make(seed, RELEASED_VAE).to(torch.bfloat16)
    model.save_pretrained(os.path.join(out, "vae"), safe_serialization=True)
    return sum(p.numel() for p in model.parameters())


def write_meta(out):
    """scheduler/, model_index.json (the tiny pipeline's, as the release lists its parts) and the tokenizer's
    config (the encoder maker writes tokenizer.json and a model_index.json of its own, replaced here)."""
    os.makedirs(os.path.join(out, "scheduler"), exist_ok=True)
    shutil.copyfile(os.path.join(TINY, "scheduler", "scheduler_config.json"),
                    os.path.join(out, "scheduler", "scheduler_config.json"))
    with open(os.path.join(TINY, "model_index.json")) as f:
        index = json.load(f)
    index["_comment"] = "random weights at the released geometry, by bench/generate_vs_torch/make_pipeline_gpu.py"
    with open(os.path.join(out, "model_index.json"), "w") as f:
        json.dump(index, f, indent=2)
    os.makedirs(os.path.join(out, "tokenizer"), exist_ok=True)
    shutil.copyfile(TOKENIZER_CONFIG, os.path.join(out, "tokenizer", "tokenizer_config.json"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--parts", default=",".join(PARTS))
    ap.add_argument("--encoder-layers", type=int, default=32)
    ap.add_argument("--transformer-layers", type=int, default=42)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    parts = [p for p in args.parts.split(",") if p]
    if set(parts) - set(PARTS):
        ap.error(f"--parts {args.parts!r}: choose from {','.join(PARTS)}")
    if "encoder" in parts and args.device != "cuda":
        ap.error("the encoder maker draws on CUDA only; leave `encoder` out of --parts with --device cpu")
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    procs = []
    if "encoder" in parts:
        procs.append(("encoder", subprocess.Popen([sys.executable, ENCODER_MAKER, "--out", args.out, "--layers",
                                                   str(args.encoder_layers), "--seed", str(args.seed)])))
    if "transformer" in parts:
        procs.append(("transformer", subprocess.Popen(
            [sys.executable, TRANSFORMER_MAKER, "--out", os.path.join(args.out, "transformer"), "--layers",
             str(args.transformer_layers), "--seed", str(args.seed), "--device", args.device])))
    if "vae" in parts:
        n = write_vae(args.out, args.seed)
        print(f"make_pipeline_gpu: vae/: {n / 1e6:.1f} M parameters in {time.time() - t0:.1f} s", file=sys.stderr)
    failed = []
    for name, p in procs:
        if p.wait() != 0:
            failed.append(f"{name} (exit {p.returncode})")
    if failed:
        sys.exit(f"make_pipeline_gpu: the makers of {', '.join(failed)} failed")
    if "meta" in parts:
        write_meta(args.out)
    print(f"make_pipeline_gpu: {args.out} ({','.join(parts)}) in {time.time() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
