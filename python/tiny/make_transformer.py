#!/usr/bin/env python3
"""Makes the embedded tiny pipeline's transformer and scheduler, and adds both to its model_index.json.

transformer/  a random MOSSImageTransformer in the official diffusers layout: config.json and
              diffusion_pytorch_model.safetensors (every weight BF16, `rope.bands` F32), the key table,
              initial values and config text of python/cases/moss_transformer_weights.py at its
              TINY_PIPELINE geometry: dim 64, num_layers 24 (so the pipeline's default negative-branch
              skip of block 22 exists), num_heads 2 (head_dim 32: 4 RoPE axes of 4 bands), ffn_dim 128,
              text_dim 64 (the tiny text encoder's hidden size), latent_channels 128 (4 x the tiny VAE's
              32 latent channels, its 2x2 patches), freq_dim 32, rope_base 10000. Drawn from torch's CPU
              generator seeded with --seed (default 3; the text encoders use 1 and 2).
scheduler/    scheduler_config.json {"_class_name": "MOSSImageScheduler", "num_train_timesteps": 1000,
              "shift": 5.0}.
model_index.json  gains "scheduler" and "transformer"; the other entries are kept as they are.

What the references say of the scheduler's config (kohakumoss 0.1.0, moss-image-mlx 0.2.0): neither reads a
scheduler_config.json. kohakumoss's probes build the official class with no arguments
(`MOSSImageScheduler()`, then `set_timesteps(steps)`); its own schedule (diffusion/sampling/schedule.py
moss_sigmas(steps, shift=5.0, total=1000, training_shift=1.0)) and the MLX port's (scheduler.py
sigmas_for(steps, shift=5.0, training_shift=1.0, total=1000), "mirrors MOSSImageScheduler.set_timesteps and
diffusers' FlowMatchEulerDiscreteScheduler.step") hard-code a 1000-step training grid and shift 5 as the
default. So the key names are diffusers' FlowMatchEulerDiscreteScheduler's for those two values
(`num_train_timesteps`, `shift`), which TensorFold's pipeline reads (src/pipelines/moss_image/folder.cpp:
num_train_timesteps must be 1000; shift is the default the request's overrides). The released file itself
is not at hand: whether its `shift` is the inference shift 5 (as here) or a training shift 1 with the 5
passed at call time is not settled by either port.

model_index.json: neither port records the official one's entries. The official classes live in the
custom-code file transformer/pipeline_moss_image.py (kohakumoss's probe.official.official_module imports it
from there), so the entries follow diffusers' custom-component convention [module file, class]:
"transformer": ["pipeline_moss_image", "MOSSImageTransformer"], "scheduler": ["pipeline_moss_image",
"MOSSImageScheduler"] (class names as both ports spell them). Unverified against the release.

Deterministic: a rerun writes the same bytes. Needs torch, numpy, safetensors.

Usage: python3 python/tiny/make_transformer.py [--out tests/data/tiny-pipeline] [--seed 3]
"""
import argparse
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "python" / "cases"))
from moss_transformer_weights import TINY_PIPELINE, make_tiny  # noqa: E402

SCHEDULER = {"_class_name": "MOSSImageScheduler", "num_train_timesteps": 1000, "shift": 5.0}
INDEX_ENTRIES = {"scheduler": ["pipeline_moss_image", "MOSSImageScheduler"],
                 "transformer": ["pipeline_moss_image", "MOSSImageTransformer"]}


def index_text(index):
    """model_index.json as the tiny pipeline writes it: 2-space indent, each [library, class] on one line;
    the _ keys first, then the components in name order (as diffusers' save_pretrained sorts them)."""
    keys = [k for k in index if k.startswith("_")] + sorted(k for k in index if not k.startswith("_"))
    lines = [f"  {json.dumps(k)}: {json.dumps(index[k], ensure_ascii=False)}" for k in keys]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "tests/data/tiny-pipeline"), help="the pipeline folder")
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    make_tiny(out / "transformer", args.seed, TINY_PIPELINE)
    (out / "scheduler").mkdir(parents=True, exist_ok=True)
    (out / "scheduler" / "scheduler_config.json").write_text(json.dumps(SCHEDULER, indent=2) + "\n")
    index_path = out / "model_index.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {"_class_name": "MossImagePipeline"}
    index.update(INDEX_ENTRIES)
    index_path.write_text(index_text(index))
    print(f"wrote {out}/scheduler/scheduler_config.json and {index_path} ({', '.join(sorted(INDEX_ENTRIES))} added)")


if __name__ == "__main__":
    main()
