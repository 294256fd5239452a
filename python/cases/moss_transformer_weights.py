"""A random MOSS-Image transformer in the official diffusers layout: the key table, each key's
random initial value at the scales moss_transformer_case.py's docstring lists, the stored dtypes and
config.json. Shared by moss_transformer_case.py (`tiny`), moss_transformer_agree.py,
bench/transformer_vs_torch/make_checkpoint_gpu.py (released geometry, drawn on a GPU) and
python/tiny/make_transformer.py (TINY_PIPELINE: the embedded tiny pipeline's transformer)."""
import json
import os
import pathlib
import sys

TINY = dict(dim=64, num_layers=4, num_heads=2, ffn_dim=96, text_dim=48, latent_channels=16, freq_dim=32,
            rope_base=10000.0)
# The embedded tiny pipeline's (tests/data/tiny-pipeline/transformer): 24 blocks so the pipeline's default
# negative-branch skip of block 22 exists; text_dim = the tiny text encoder's hidden size 64; latent_channels
# = 4 x the tiny VAE's 32 latent channels (its 2x2 patches).
TINY_PIPELINE = dict(dim=64, num_layers=24, num_heads=2, ffn_dim=128, text_dim=64, latent_channels=128, freq_dim=32,
                     rope_base=10000.0)
RELEASED = dict(dim=3072, num_layers=42, num_heads=24, ffn_dim=8192, text_dim=4096, latent_channels=128,
                freq_dim=256, rope_base=10000.0)  # transformer/config.json of MOSS-Image-Base
WEIGHTS = "diffusion_pytorch_model.safetensors"
TEXT_BLOCKS = 2


def official_shapes(c):
    """The official state-dict keys -> shapes for a config dict c (references.md's table)."""
    d, f, t, lc, fd = c["dim"], c["ffn_dim"], c["text_dim"], c["latent_channels"], c["freq_dim"]
    hd = d // c["num_heads"]
    s = {"video_embedder.weight": (d, lc), "video_embedder.bias": (d,),
         "text_embedder.proj.weight": (d, t), "text_embedder.proj.bias": (d,)}
    for b in range(TEXT_BLOCKS):
        p = f"text_embedder.blocks.{b}."
        s.update({p + "norm1.weight": (d,), p + "norm2.weight": (d,), p + "q_norm.weight": (hd,),
                  p + "k_norm.weight": (hd,), p + "qkv.weight": (3 * d, d), p + "qkv.bias": (3 * d,),
                  p + "proj.weight": (d, d), p + "proj.bias": (d,), p + "ffn_gate.weight": (f, d),
                  p + "ffn_gate.bias": (f,), p + "ffn_up.weight": (f, d), p + "ffn_up.bias": (f,),
                  p + "ffn_down.weight": (d, f), p + "ffn_down.bias": (d,)})
    s.update({"time_embedding.0.weight": (d, fd), "time_embedding.0.bias": (d,),
              "time_embedding.2.weight": (d, d), "time_embedding.2.bias": (d,),
              "shared_block_modulation.weight": (6 * d, d), "shared_block_modulation.bias": (6 * d,),
              "video_head_modulation.weight": (2 * d, d), "video_head_modulation.bias": (2 * d,)})
    for i in range(c["num_layers"]):
        p = f"layers.{i}."
        s.update({p + "norm1.weight": (d,), p + "norm2.weight": (d,), p + "q_norm.weight": (hd,),
                  p + "k_norm.weight": (hd,)})
        s.update({p + f"proj.{n}.weight": (d, d) for n in "qkvo"})
        s.update({p + "proj.ffn_up_gate.weight": (2 * f, d), p + "proj.ffn_down.weight": (d, f)})
    s.update({"final_norm_video.weight": (d,), "final_linear_video.weight": (lc, d),
              "rope.bands": (hd // 8,)})
    return s


# gain of each matrix (weight = N(0, 1) * gain / sqrt(fan_in)), by the key's module name
QK_NORM = 1.4                         # centre of the q_norm / k_norm weights
GAINS = {"time_embedding.0": 2.0, "shared_block_modulation": 0.5, "video_head_modulation": 0.5,
         "text_embedder.proj": 1.0, "proj": 2.5, "o": 2.5, "ffn_gate": 3.0, "ffn_up": 8.0, "ffn_down": 0.15}


def initial_weight(key, shape, randn, rope_base):
    """The fp32 value of one official key (`randn(shape)`: N(0, 1) draws, one call per key but
    rope.bands, which is computed): the scales the module docstring lists. Shared with the GPU
    writer of released-geometry checkpoints (bench/transformer_vs_torch/make_checkpoint_gpu.py)."""
    import numpy as np
    import torch

    module = key.rsplit(".", 1)[0]
    last = module.rsplit(".", 1)[-1]
    if key == "rope.bands":
        n = shape[0]
        exponent = np.arange(n, dtype=np.float32) / np.float32(n)
        return torch.from_numpy((np.float32(1) / (np.float32(rope_base) ** exponent)).astype(np.float32))
    if last.startswith("norm") or last.endswith("_norm") or last == "final_norm_video":
        return (QK_NORM if last.endswith("_norm") else 1.0) + 0.1 * randn(shape)
    if key.endswith(".bias"):
        scale = 0.2 if last in ("shared_block_modulation", "video_head_modulation") else 0.1
        return scale * randn(shape)
    if last == "ffn_up_gate":  # first ffn_dim outputs: the hidden ("up") half; last: the gate
        f = shape[0] // 2
        t = randn(shape) / shape[1] ** 0.5
        t[:f] *= 8.0
        t[f:] *= 3.0
        return t
    gain = GAINS.get(module, GAINS.get(last, 1.0))
    return gain / shape[1] ** 0.5 * randn(shape)


def as_stored(key, t):
    """As the release stores it: rope.bands F32, every weight BF16."""
    import torch
    return t.contiguous() if key == "rope.bands" else t.to(torch.bfloat16).contiguous()


def config_json(c):
    """config.json's text for a geometry dict c (the keys of TINY), as kohakumoss's exporter writes it."""
    return json.dumps({"_class_name": "MOSSImageTransformer", "_diffusers_version": "0.38.0", **c}, indent=2) + "\n"


def make_tiny(folder, seed, c=TINY):
    """A random checkpoint of geometry c (default TINY) in folder: config.json and one safetensors file."""
    import torch
    from safetensors.torch import save_file

    g = torch.Generator().manual_seed(seed)
    randn = lambda shape: torch.randn(shape, generator=g)  # noqa: E731
    state = {key: as_stored(key, initial_weight(key, shape, randn, c["rope_base"]))
             for key, shape in official_shapes(c).items()}
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    save_file(state, str(folder / WEIGHTS), metadata={"format": "pt"})
    (folder / "config.json").write_text(config_json(c))
    values = sum(t.numel() for t in state.values())
    print(f"wrote {folder}: {len(state)} tensors, {values:,} values, "
          f"{os.path.getsize(folder / WEIGHTS):,} bytes; config {json.dumps(c)}", file=sys.stderr)
