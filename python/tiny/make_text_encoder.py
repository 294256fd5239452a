#!/usr/bin/env python3
"""Tiny random MOSS-Image text encoders made with transformers' Qwen3_5ForConditionalGeneration.

Saved with save_pretrained, sharded small, with the release's tensor names (model.language_model.*,
a tiny vision tower that TensorFold never reads, an mtp tensor) and the release's dtypes: BF16
everywhere except linear_attn.A_log and linear_attn.norm.weight, which stay F32.

  python3 python/tiny/make_text_encoder.py            # both embedded checkpoints
  python3 python/tiny/make_text_encoder.py --only default|b

default -> tests/data/tiny-pipeline/text_encoder   (3 DeltaNet layers + 1 full attention)
b       -> tests/data/moss-tiny-b/text_encoder     (3 full-attention layers of 6, key dim != value dim,
                                                    3 value heads per key head, 4 query heads per kv head)
"""
import argparse
import json
import os
import shutil

import torch
from safetensors.torch import load_file, save_file
from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")

GEOMETRIES = {
    "default": dict(
        out=os.path.join(DATA, "tiny-pipeline", "text_encoder"), seed=1,
        text=dict(vocab_size=4096, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                  num_attention_heads=2, num_key_value_heads=1, head_dim=32,
                  linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16,
                  linear_value_head_dim=16, linear_conv_kernel_dim=4,
                  layer_types=["linear_attention"] * 3 + ["full_attention"])),
    "b": dict(
        out=os.path.join(DATA, "moss-tiny-b", "text_encoder"), seed=2,
        text=dict(vocab_size=4096, hidden_size=48, intermediate_size=96, num_hidden_layers=6,
                  num_attention_heads=4, num_key_value_heads=1, head_dim=16,
                  linear_num_key_heads=2, linear_num_value_heads=6, linear_key_head_dim=8,
                  linear_value_head_dim=12, linear_conv_kernel_dim=3,
                  layer_types=["linear_attention", "full_attention"] * 3)),
}

COMMON_TEXT = dict(rms_norm_eps=1e-6, hidden_act="silu", tie_word_embeddings=False, max_position_embeddings=4096,
                   rope_parameters=dict(rope_type="default", rope_theta=10000000.0, partial_rotary_factor=0.25,
                                        mrope_section=[2, 1, 1], mrope_interleaved=True))
TINY_VISION = dict(depth=1, hidden_size=16, intermediate_size=32, num_heads=2, in_channels=3, patch_size=4,
                   spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=16)

F32_SUFFIXES = ("linear_attn.A_log", "linear_attn.norm.weight")


def randomise(model, seed):
    """Weights large enough that every layer changes its input visibly (transformers' init is tiny)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("A_log"):
                p.copy_(torch.empty(p.shape).uniform_(0.5, 8.0, generator=g).log())
            elif name.endswith("dt_bias"):
                p.copy_(torch.randn(p.shape, generator=g) * 0.5 + 1.0)
            elif name.endswith("linear_attn.norm.weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            elif p.dim() == 1:  # zero-centred norms: scale 1 + w
                p.copy_(0.2 * torch.randn(p.shape, generator=g))
            elif "embed_tokens" in name:
                p.copy_(torch.randn(p.shape, generator=g))
            elif "conv1d" in name:
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)
            else:
                fan_in = p.shape[-1] if p.dim() == 2 else p[0].numel()
                p.copy_(torch.randn(p.shape, generator=g) / fan_in ** 0.5)


def make(key):
    spec = GEOMETRIES[key]
    torch.manual_seed(spec["seed"])
    text = dict(COMMON_TEXT, **spec["text"])
    config = Qwen3_5Config(text_config=text, vision_config=dict(TINY_VISION, out_hidden_size=text["hidden_size"]))
    model = Qwen3_5ForConditionalGeneration(config).eval()
    randomise(model, spec["seed"])
    model = model.to(torch.bfloat16)
    for name, p in model.named_parameters():
        if name.endswith(F32_SUFFIXES):
            p.data = p.data.float()
    out = spec["out"]
    shutil.rmtree(out, ignore_errors=True)
    model.save_pretrained(out, max_shard_size="300KB")
    add_mtp_tensor(out)
    files = sorted(os.listdir(out))
    size = sum(os.path.getsize(os.path.join(out, f)) for f in files)
    print(f"{out}: {len(files)} files, {size / 1e6:.2f} MB")


def add_mtp_tensor(out):
    """The release carries an mtp head; one tensor of it in its own shard shows it is never read."""
    index_path = os.path.join(out, "model.safetensors.index.json")
    with open(index_path) as f:
        index = json.load(f)
    shard = "model-mtp.safetensors"
    save_file({"mtp.fc.weight": torch.zeros(4, 4, dtype=torch.bfloat16)}, os.path.join(out, shard),
              metadata={"format": "pt"})
    index["weight_map"]["mtp.fc.weight"] = shard
    with open(index_path, "w") as f:
        json.dump(index, f, indent=2, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=sorted(GEOMETRIES))
    args = ap.parse_args()
    for key in [args.only] if args.only else sorted(GEOMETRIES):
        make(key)


if __name__ == "__main__":
    main()
