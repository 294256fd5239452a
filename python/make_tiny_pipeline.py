#!/usr/bin/env python3
"""Remakes the embedded tiny pipeline (tests/data/tiny-pipeline) and its sibling test checkpoints.

Each part has its own maker under python/tiny/; this runs them in order (the transformer and
scheduler last: make_transformer.py also adds them to model_index.json). Needs torch, transformers
and diffusers (pip), which CI does not: the outputs are committed.

  python3 python/make_tiny_pipeline.py
"""
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent

for maker in ("make_tokenizer.py", "make_text_encoder.py", "make_vae.py", "make_transformer.py"):
    print(f"== {maker}", flush=True)
    subprocess.run([sys.executable, str(HERE / "tiny" / maker)], check=True)
