#!/usr/bin/env python3
"""Times kohakumoss's torch MOSS-Image transformer in bf16 (kohaku_calls.py), eager and through
torch.compile (default mode), on a checkpoint folder: per picture size one forward and one guidance
step (two forwards, the negative one skipping the middle block), CUDA events (the wall clock on the
CPU), the median of reps; then the bf16 matrix-product rate of the same device. One JSON line per
measurement, shaped like bench_transformer_timer's:
  {"impl": "torch-eager", "kind": "forward", "size": 1024, "h": 64, "w": 64, "text": 100, "median_ms": ...}

  torch_timer.py --model DIR [--sizes 512,1024,2048] [--text 100] [--uncond-text 20] [--reps 5]
                 [--impls eager,compile] [--compile-budget-s 240] [--mm-size 8192] [--attention sdpa|varlen]
                 [--device cuda|cpu]

torch.compile: the whole forward, each size compiled afresh (dynamo reset, static shapes), the cond and
the uncond forward each a graph; the first calls' time is printed as the compile time with the number
of graphs and graph breaks. A size is skipped when the compile time spent so far plus the previous
size's would pass --compile-budget-s. Attention: every pass here holds one sample, so by default each
attention is one SDPA call over it (kohaku_calls.sdpa_one_sample, the official batch-1 call);
--attention varlen keeps kohakumoss's own op, whose host read of the segment bounds breaks the compiled
graph at every attention.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import kohaku_calls as kc  # noqa: E402
from torch_cuda_timing import times_ms  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402

LATENT = 16  # pixels per latent side: the VAE's 8x and the 2x2 patchify


def emit(**row):
    print(json.dumps(row), flush=True)


def sync(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def measure(impl, kind, size, fn, args, extra=None):
    runs = times_ms(fn, args.reps, warmup=2, device=args.device)
    row = dict(impl=impl, kind=kind, size=size, h=size // LATENT, w=size // LATENT, text=args.text)
    row.update(extra or {})
    emit(**row, median_ms=statistics.median(runs), runs=runs)


def time_size(impl, size, calls, args, skip):
    neg = {"uncond_text": args.uncond_text, "skip_layer": skip}
    for kind, fn, extra in (("forward", calls.forward, None), ("guidance", calls.guidance, neg)):
        try:
            with torch.no_grad():
                measure(impl, kind, size, fn, args, extra)
        except RuntimeError as e:  # out of memory, say: the other sizes and impls still run
            emit(impl=impl, kind=kind, size=size, error=f"{type(e).__name__}: {e}"[:500])
            if torch.device(args.device).type == "cuda":
                torch.cuda.empty_cache()


def first_call_s(fn, device):
    t0 = time.perf_counter()
    with torch.no_grad():
        fn()
    sync(device)
    return time.perf_counter() - t0


def compile_counters():
    return counters["stats"].get("unique_graphs", 0), sum(counters["graph_break"].values())


def run_compiled(model, sizes, args, skip):
    # a static graph per shape and branch; with --attention varlen one per block piece
    for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 4096)
    spent, last = 0.0, 0.0
    for size in sizes:
        if spent + last > args.compile_budget_s:
            reason = (f"compile budget: {spent:.0f} s spent, the previous size took {last:.0f} s, "
                      f"budget {args.compile_budget_s:g} s")
            for kind in ("forward", "guidance"):
                emit(impl="torch-compile", kind=kind, size=size, skipped=reason)
            continue
        print(f"torch_timer: compiling {size}x{size}", file=sys.stderr, flush=True)
        torch._dynamo.reset()
        counters.clear()
        cond, uncond = kc.forwards(model, skip)
        calls = kc.Calls(torch.compile(cond, dynamic=False), torch.compile(uncond, dynamic=False),
                         kc.Inputs(model, size // LATENT, size // LATENT, args.text, args.uncond_text,
                                   args.device, seed=size))
        try:
            cond_s = first_call_s(calls.forward, args.device)
            uncond_s = first_call_s(lambda: calls.uncond(calls.x.latents, calls.x.neg_rows, calls.x.sigma,
                                                         calls.x.neg_seq), args.device)
        except Exception as e:  # a compile failure leaves the eager numbers standing
            emit(impl="torch-compile", kind="compile", size=size, error=f"{type(e).__name__}: {e}"[:500])
            return
        last = cond_s + uncond_s
        spent += last
        graphs, breaks = compile_counters()
        emit(impl="torch-compile", kind="compile", size=size, compile_s=round(last, 2), cond_s=round(cond_s, 2),
             uncond_s=round(uncond_s, 2), graphs=graphs, graph_breaks=breaks)
        time_size("torch-compile", size, calls, args, skip)
        del calls
        torch._dynamo.reset()


def matmul_rate(n, args):
    """Median TFLOP/s of an n x n x n bf16 product on the device (the same run's roof)."""
    g = torch.Generator().manual_seed(0)
    a = torch.randn((n, n), generator=g).to(torch.bfloat16).to(args.device)
    b = torch.randn((n, n), generator=g).to(torch.bfloat16).to(args.device)
    c = torch.empty((n, n), dtype=torch.bfloat16, device=args.device)
    runs = times_ms(lambda: torch.mm(a, b, out=c), max(args.reps, 10), warmup=3, device=args.device)
    ms = statistics.median(runs)
    emit(impl="torch", kind="matmul", n=n, median_ms=ms, tflops=2.0 * n ** 3 / (ms * 1e-3) / 1e12, runs=runs)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="the transformer folder (config.json + safetensors)")
    ap.add_argument("--sizes", default="512,1024,2048")
    ap.add_argument("--text", type=int, default=100, help="prompt rows of the forward and the cond branch")
    ap.add_argument("--uncond-text", type=int, default=20, help="prompt rows of the uncond branch")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--impls", default="eager,compile")
    ap.add_argument("--attention", default="sdpa", choices=("sdpa", "varlen"),
                    help="sdpa: one SDPA call a pass (each pass is one sample); varlen: kohakumoss's own op, "
                         "which reads segment bounds on the host (a compile graph break at every attention)")
    ap.add_argument("--compile-budget-s", type=float, default=240.0)
    ap.add_argument("--mm-size", type=int, default=8192, help="side of the matrix product timed (0: none)")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    args = ap.parse_args()
    try:
        sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    except ValueError:
        ap.error(f"--sizes {args.sizes!r}: expected sizes in pixels, comma-separated")
    if not sizes or any(s < LATENT or s % LATENT for s in sizes):
        ap.error(f"--sizes {args.sizes!r}: each size must be a positive multiple of {LATENT}")
    impls = [i for i in args.impls.split(",") if i]
    if not impls or set(impls) - {"eager", "compile"}:
        ap.error(f"--impls {args.impls!r}: expected eager, compile or both")
    if args.text < 1 or args.uncond_text < 1 or args.reps < 1:
        ap.error("--text, --uncond-text and --reps must be >= 1")
    if args.device == "cuda" and not torch.cuda.is_available():
        ap.error("--device cuda but torch sees no CUDA device")
    return args, sizes, impls


def main():
    args, sizes, impls = parse_args()
    t0 = time.perf_counter()
    model = kc.load(args.model, args.device)
    kc.use_attention(model, args.attention)
    sync(args.device)
    load_s = time.perf_counter() - t0
    geo = kc.geometry(model)
    skip = kc.skip_layer(geo["layers"])
    device = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    emit(impl="torch", kind="load", device=device, load_s=round(load_s, 3), torch=torch.__version__,
         kohakumoss=kc.version("kohakumoss"), attention=args.attention, skip_layer=skip, **geo)
    print(f"torch_timer: torch {torch.__version__}, kohakumoss {kc.version('kohakumoss')} on {device}; "
          f"loaded in {load_s:.1f} s; {geo}", file=sys.stderr, flush=True)
    if "eager" in impls:
        cond, uncond = kc.forwards(model, skip)
        for size in sizes:  # smallest first: a large size's heat slows the clock for the ones after it
            x = kc.Inputs(model, size // LATENT, size // LATENT, args.text, args.uncond_text, args.device, seed=size)
            time_size("torch-eager", size, kc.Calls(cond, uncond, x), args, skip)
    if "compile" in impls:
        run_compiled(model, sizes, args, skip)
    if args.mm_size:
        del model
        matmul_rate(args.mm_size, args)
    if args.device == "cuda":
        print(f"torch_timer: peak GPU memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB",
              file=sys.stderr)


if __name__ == "__main__":
    main()
