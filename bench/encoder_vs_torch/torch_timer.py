#!/usr/bin/env python3
"""Times transformers' Qwen3.5 text model (bf16, eager and sdpa attention, its torch DeltaNet path) on
a checkpoint folder at given token counts and for a prompt pair, with CUDA events; prints one JSON
line per measurement: {"impl": "torch-eager", "case": "75", "tokens": 75, "median_ms": ..., "runs": [...]}.

  torch_timer.py --model DIR --counts 10,34,63,75,256,1024,4096 --pair 75,10 [--reps 7]
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

import torch
from safetensors import safe_open

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from torch_cuda_timing import cuda_event_times_ms  # noqa: E402

spec = importlib.util.spec_from_file_location("case", os.path.join(ROOT, "python", "cases", "moss_image_case.py"))
case = importlib.util.module_from_spec(spec)
spec.loader.exec_module(case)
qwen = case.qwen


def load(te_dir):
    cfg = case.text_config(te_dir)
    tensors, _ = case.stored_tensors(te_dir)
    with torch.device("meta"):
        model = qwen.Qwen3_5TextModel(cfg)
    model = model.to_empty(device="cuda")
    model.rotary_emb = qwen.Qwen3_5TextRotaryEmbedding(config=cfg).to("cuda")
    handles = {}
    with torch.no_grad():
        for name, p in model.named_parameters():
            f, k = tensors[name]
            if f not in handles:
                handles[f] = safe_open(f, "pt", device="cuda:0")
            p.data = handles[f].get_tensor(k).to(torch.bfloat16)  # transformers' bf16 load
    return model.eval(), cfg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--counts", default="10,34,63,75,256,1024,4096")
    ap.add_argument("--pair", default="75,10")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--impls", default="eager,sdpa")
    args = ap.parse_args()
    present = case.refuse_fast_kernels(True)
    te = case.component(args.model, "text_encoder")
    t0 = time.time()
    model, cfg = load(te)
    print(f"torch {torch.__version__}, transformers {case.transformers.__version__}, {torch.cuda.get_device_name()}; "
          f"loaded in {time.time() - t0:.1f} s; fast kernels present: {present or 'none'}", file=sys.stderr, flush=True)
    gen = torch.Generator().manual_seed(1)
    counts = [int(c) for c in args.counts.split(",") if c]
    pair = [int(c) for c in args.pair.split(",") if c]
    for impl in args.impls.split(","):
        model.config._attn_implementation = impl
        for layer in model.layers:
            if hasattr(layer, "self_attn"):
                layer.self_attn.config._attn_implementation = impl
        with torch.no_grad():
            # shortest first, as bench_encoder_timer: a long case's heat slows the clock for the cases after it
            for n in sorted(counts + ([sum(pair)] if pair else [])):
                is_pair = pair and n == sum(pair) and n not in counts
                if is_pair:
                    L = max(pair)
                    ids = torch.randint(0, 151000, (len(pair), L), generator=gen).cuda()
                    mask = torch.zeros(len(pair), L, dtype=torch.long, device="cuda")
                    for i, c in enumerate(pair):
                        mask[i, :c] = 1  # right padding: the real tokens never see the pad
                    fn = lambda: model(input_ids=ids, attention_mask=mask, use_cache=False)
                    name = "pair " + "+".join(map(str, pair))
                else:
                    ids = torch.randint(0, 151000, (1, n), generator=gen).cuda()
                    fn = lambda: model(input_ids=ids, use_cache=False)
                    name = str(n)
                reps = args.reps if n <= 1024 else max(3, args.reps // 2)
                runs = cuda_event_times_ms(fn, reps, warmup=2)
                print(json.dumps({"impl": "torch-" + impl, "case": name, "tokens": n,
                                  "median_ms": statistics.median(runs), "runs": runs}), flush=True)


if __name__ == "__main__":
    main()
