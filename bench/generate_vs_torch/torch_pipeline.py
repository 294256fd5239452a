#!/usr/bin/env python3
"""The official MOSS-Image pipeline in torch on a pipeline folder, timed stage by stage
(docs/perf/transformer/references.md, "The sampler"):

  encode     each prompt alone (the prompt, then the negative one, "" by default) in the chat format of
             python/cases/moss_image_case.py (user turn, assistant turn opened with <think>), tokenizer.json's
             ids cut at 4,096, through transformers' Qwen3_5TextModel in bf16 (sdpa attention; built as
             moss_image_case.build_model builds it), its final norm's rows
  noise      torch.randn((1, C, H/16, W/16), generator=torch.Generator().manual_seed(seed)) on the CPU, then
             to the device (not timed: the official pipeline draws it before the loop)
  N steps    kohakumoss's moss_sigmas(steps, shift) (shift from scheduler/scheduler_config.json); per step two
             forwards of kohakumoss's transformer, every parameter bf16 and its eager ops (as
             bench/transformer_vs_torch/kohaku_calls.py loads and calls it: one SDPA a pass): cond on the
             prompt's rows, uncond on the negative rows with block 22 skipped -- two calls per step, as the
             official pipeline's loop (kohakumoss's own sampler would pack both into one varlen call);
             guidance u + g (v - u) and the Euler update x + (sigma_{i+1} - sigma_i) pred in fp32
  decode     diffusers' AutoencoderKLFlux2 in fp32 (cuDNN's TF32 setting left at torch's default, as the
             pipeline leaves it): z = x sqrt(bn.running_var + eps) + bn.running_mean, unpatchify, vae.decode,
             clamp(-1, 1), 8-bit = round(clip(x / 2 + 0.5, 0, 1) 255) (numpy, half to even)

Each stage ends with torch.cuda.synchronize. A warm-up picture of --warmup-steps steps first (with --impl
compile, it is where torch.compile compiles the cond and the uncond forward: their first calls are the
compile time, emitted apart; the warm-up has two steps at least); then --reps whole pictures, their median. One JSON line per result on stdout:
  {"impl": "torch-eager", "kind": "load", ...}, {"kind": "compile", ...}, {"kind": "picture", "rep": i, ...},
  {"kind": "summary", ...}, {"kind": "vae_bf16", ...}, {"impl": "torch", "kind": "matmul", ...}

  torch_pipeline.py --model DIR --width 1024 --height 1024 --steps 50 --guidance 3 --seed 1
                    --impl eager|compile --device cuda --out PNG [--prompt-file P | --prompt TEXT]
                    [--negative TEXT] [--reps 1] [--warmup-steps 1] [--compile-budget-s 300]
                    [--vae-bf16] [--mm-size 0] [--json]
"""
import argparse
import contextlib
import importlib.metadata
import importlib.util
import json
import os
import signal
import statistics
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python", "cases"))
sys.path.insert(0, os.path.join(ROOT, "bench", "transformer_vs_torch"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import moss_image_case as mic  # noqa: E402
import kohaku_calls as kc  # noqa: E402

MAX_TOKENS = 4096
SKIP_LAYER = 22  # the pipeline's default skip_layers=[22] for the negative branch


def emit(**row):
    print(json.dumps(row), flush=True)


def note(msg):
    print(f"torch_pipeline: {msg}", file=sys.stderr, flush=True)


def version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class Clock:
    def __init__(self, device):
        self.cuda = torch.device(device).type == "cuda"

    def __call__(self):
        if self.cuda:
            torch.cuda.synchronize()
        return time.perf_counter()


def moss_sigmas_inline(steps, shift, total=1000):
    """kohakumoss.diffusion.sampling.schedule.moss_sigmas, copied (used only where that cannot be imported)."""
    def grid(count, s):
        t = torch.linspace(1, s / (total + s - 1), count, dtype=torch.float32)
        return t if s == 1.0 else s * t / (1.0 + (s - 1.0) * t)
    sigmas = grid(steps, shift)
    training = grid(total, 1.0).flip(0)
    upper = torch.searchsorted(training, sigmas).clamp(max=total - 1)
    lower = (upper - 1).clamp(min=0)
    nearer_lower = (sigmas - training[lower]).abs() <= (training[upper] - sigmas).abs()
    snapped = torch.unique_consecutive(training[torch.where(nearer_lower, lower, upper)])
    return torch.cat((snapped, snapped.new_zeros(1)))


def schedule(steps, shift):
    try:
        from kohakumoss.diffusion.sampling.schedule import moss_sigmas
        s, source = moss_sigmas(steps, shift), "kohakumoss.moss_sigmas"
    except ImportError as e:
        note(f"kohakumoss's schedule not importable ({e}); its copy used")
        s, source = moss_sigmas_inline(steps, shift), "inline copy of kohakumoss.moss_sigmas"
    if not torch.equal(s, moss_sigmas_inline(steps, shift)):
        sys.exit("torch_pipeline: kohakumoss's moss_sigmas differs from the inline copy")
    return s, source


class Encoder:
    """transformers' Qwen3_5TextModel in bf16 with sdpa attention, and the chat-formatted ids."""

    def __init__(self, model_dir, device):
        from tokenizers import Tokenizer
        te_dir = mic.component(model_dir, "text_encoder")
        self.tok = Tokenizer.from_file(mic.find_tokenizer(model_dir))
        cfg = mic.text_config(te_dir)
        cfg._attn_implementation = "sdpa"
        tensors, _ = mic.stored_tensors(te_dir)
        self.model = mic.build_model(cfg, tensors, torch.bfloat16, False, torch.device(device))
        self.device = device
        self.fast_kernels = [m for m in ("fla", "causal_conv1d") if importlib.util.find_spec(m) is not None]

    def ids(self, text):
        return mic.encode_ids(self.tok, text, "chat")[:MAX_TOKENS]

    def rows(self, text):
        ids = torch.tensor([self.ids(text)], dtype=torch.long, device=self.device)
        with torch.no_grad():
            return self.model(input_ids=ids, use_cache=False).last_hidden_state[0]  # bf16 [L, hidden]


class Vae:
    """diffusers' AutoencoderKLFlux2: the sampler's packed latents -> 8-bit picture."""

    def __init__(self, folder, device, dtype=torch.float32):
        from diffusers import AutoencoderKLFlux2
        self.vae = AutoencoderKLFlux2.from_pretrained(folder, torch_dtype=dtype).to(device).eval()
        self.dtype = dtype

    def decode(self, x, h, w):
        """x: packed fp32 [h*w, C] -> float [H, W, 3] on the device, in [-1, 1]."""
        vae = self.vae
        z = x.T.reshape(1, -1, h, w).float()
        bn, eps = vae.bn, vae.config.batch_norm_eps
        z = z * (bn.running_var.float() + eps).sqrt().view(1, -1, 1, 1) + bn.running_mean.float().view(1, -1, 1, 1)
        b, c = z.shape[:2]
        z = z.reshape(b, c // 4, 2, 2, h, w).permute(0, 1, 4, 2, 5, 3).reshape(b, c // 4, 2 * h, 2 * w)
        with torch.no_grad():
            return vae.decode(z.to(self.dtype), return_dict=False)[0].clamp(-1, 1).float()[0].permute(1, 2, 0)


def to_8bit(img):
    img = img.cpu().numpy()
    return np.round(np.clip(img / 2 + 0.5, 0, 1) * 255).astype(np.uint8)


class Pipeline:
    def __init__(self, args):
        self.args, self.device = args, args.device
        clock = Clock(args.device)
        t0 = clock()
        self.encoder = Encoder(args.model, args.device)
        t1 = clock()
        self.model = kc.load(os.path.join(args.model, "transformer"), args.device)
        kc.use_attention(self.model, "sdpa")
        t2 = clock()
        self.vae = Vae(os.path.join(args.model, "vae"), args.device)
        t3 = clock()
        self.loads = dict(encoder_s=t1 - t0, transformer_s=t2 - t1, vae_s=t3 - t2)
        layers = self.model.cfg.depth
        if SKIP_LAYER >= layers:
            sys.exit(f"torch_pipeline: the transformer has {layers} blocks; the negative branch skips block {SKIP_LAYER}")
        self.skip = SKIP_LAYER
        self.cond, self.uncond = kc.forwards(self.model, self.skip)  # kc.forwards takes one block index
        self.layouts = {}
        with open(os.path.join(args.model, "scheduler", "scheduler_config.json")) as f:
            self.shift = float(json.load(f).get("shift", 5.0))

    def layout(self, h, w, text):
        """kohakumoss's packed layout of one sample, built once per shape (the same object every picture, so a
        compiled graph's guards on it hold)."""
        from kohakumoss.types.seqinfo import build_seqinfo
        key = (h, w, text)
        if key not in self.layouts:
            self.layouts[key] = build_seqinfo(torch.tensor([[h, w]]), torch.tensor([text])).to(self.device)
        return self.layouts[key]

    def compile(self):
        self.cond = torch.compile(self.cond, dynamic=False)
        self.uncond = torch.compile(self.uncond, dynamic=False)

    def picture(self, steps, first_calls=None):
        """One whole picture; returns (8-bit picture, stage seconds, token counts)."""
        a, clock = self.args, Clock(self.device)
        h, w = a.height // 16, a.width // 16
        t0 = clock()
        rows = self.encoder.rows(a.prompt)
        neg = self.encoder.rows(a.negative) if a.guidance != 1.0 else None
        t1 = clock()
        noise = torch.randn((1, self.model.cfg.latent_channels, h, w), generator=torch.Generator().manual_seed(a.seed))
        x = noise[0].flatten(1).T.contiguous().to(self.device)
        sigmas, _ = schedule(steps, self.shift)
        sigmas = sigmas.to(self.device)
        seq = self.layout(h, w, rows.shape[0])
        neg_seq = self.layout(h, w, neg.shape[0]) if neg is not None else None
        t2 = clock()
        with torch.no_grad():
            for i in range(len(sigmas) - 1):
                s = sigmas[i].reshape(1)
                if first_calls is not None and i == 0:  # the compile: each forward's first call timed alone
                    c0 = clock()
                    v = self.cond(x, rows, s, seq).float()
                    c1 = clock()
                    u = self.uncond(x, neg, s, neg_seq).float()
                    c2 = clock()
                    first_calls.update(cond_s=c1 - c0, uncond_s=c2 - c1)
                else:
                    v = self.cond(x, rows, s, seq).float()
                    u = self.uncond(x, neg, s, neg_seq).float() if neg is not None else None
                pred = v if u is None else u + a.guidance * (v - u)
                x = x + (sigmas[i + 1] - sigmas[i]) * pred
        t3 = clock()
        img = self.vae.decode(x, h, w)
        t4 = clock()
        pic = to_8bit(img)
        tokens = dict(prompt_tokens=int(rows.shape[0]), negative_tokens=int(neg.shape[0]) if neg is not None else 0)
        times = dict(encode_s=t1 - t0, sample_s=t3 - t2, decode_s=t4 - t3)
        times["total_s"] = times["encode_s"] + times["sample_s"] + times["decode_s"]
        times["step_s"] = times["sample_s"] / max(len(sigmas) - 1, 1)
        tokens["sampler_steps"] = len(sigmas) - 1
        return pic, times, tokens, x


@contextlib.contextmanager
def time_limit(seconds):
    """Raises TimeoutError in the main thread after `seconds` (SIGALRM); no limit when <= 0."""
    if seconds <= 0:
        yield
        return

    def fire(signum, frame):
        raise TimeoutError(f"compile budget of {seconds:g} s passed")
    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def save_png(path, pic):
    from PIL import Image
    Image.fromarray(pic).save(path)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="the pipeline folder")
    ap.add_argument("--prompt", help="the prompt text")
    ap.add_argument("--prompt-file", help="UTF-8 file holding the prompt (as tf-moss-image generate reads it)")
    ap.add_argument("--negative", default="", help='the negative prompt (default "")')
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--height", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--guidance", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--impl", default="eager", choices=("eager", "compile"))
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--out", help="the PNG of the last timed picture")
    ap.add_argument("--reps", type=int, default=1, help="whole pictures timed after the warm-up (median)")
    ap.add_argument("--warmup-steps", type=int, default=1, help="steps of the untimed warm-up picture (0: none)")
    ap.add_argument("--compile-budget-s", type=float, default=300.0,
                    help="give up on torch.compile after this long (0: no limit)")
    ap.add_argument("--vae-bf16", action="store_true", help="also time the decode with the VAE in bf16")
    ap.add_argument("--mm-size", type=int, default=0, help="also time an n^3 bf16 matrix product (0: none)")
    ap.add_argument("--json", action="store_true", help="JSON lines on stdout (always on; accepted for the brief)")
    args = ap.parse_args()
    if (args.prompt is None) == (args.prompt_file is None):
        ap.error("give one of --prompt TEXT or --prompt-file FILE")
    if args.prompt_file:
        with open(args.prompt_file, encoding="utf-8") as f:
            args.prompt = f.read()
    if args.width % 16 or args.height % 16 or args.width <= 0 or args.height <= 0:
        ap.error("--width and --height must be positive multiples of 16")
    if args.device == "cuda" and not torch.cuda.is_available():
        ap.error("--device cuda but torch sees no CUDA device")
    return args


def main():
    args = parse_args()
    impl = f"torch-{args.impl}"
    cuda = torch.device(args.device).type == "cuda"
    base = dict(impl=impl, width=args.width, height=args.height, steps=args.steps, seed=args.seed)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    pipe = Pipeline(args)
    _, sched_source = schedule(args.steps, pipe.shift)
    emit(**base, kind="load", **{k: round(v, 3) for k, v in pipe.loads.items()},
         device=torch.cuda.get_device_name(0) if cuda else "cpu", torch=torch.__version__,
         transformers=version("transformers"), diffusers=version("diffusers"), kohakumoss=version("kohakumoss"),
         schedule=sched_source, skip_layers=[pipe.skip], cfg="two calls per step (cond, then uncond)",
         encoder_fast_kernels=pipe.encoder.fast_kernels, cudnn_allow_tf32=torch.backends.cudnn.allow_tf32,
         matmul_allow_tf32=torch.backends.cuda.matmul.allow_tf32)
    if args.impl == "compile":
        from torch._dynamo.utils import counters
        for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit"):
            if hasattr(torch._dynamo.config, name):
                setattr(torch._dynamo.config, name, 4096)
        counters.clear()
        pipe.compile()
        first = {}
        t0 = time.perf_counter()
        try:
            with time_limit(args.compile_budget_s):
                # two steps at least: a second sigma value, so a recompile on it happens here, not in the timed run
                pipe.picture(max(args.warmup_steps, 2), first_calls=first)
        except Exception as e:  # noqa: BLE001 (a compile failure is a result)
            # dynamo may wrap the budget's TimeoutError in an error of its own
            if isinstance(e, TimeoutError) or "compile budget of" in str(e):
                emit(**base, kind="compile", skipped=f"compile budget of {args.compile_budget_s:g} s passed: "
                     f"torch.compile given up after {time.perf_counter() - t0:.0f} s")
            else:
                emit(**base, kind="compile", error=f"{type(e).__name__}: {e}"[:500])
            return 0
        graphs = counters["stats"].get("unique_graphs", 0)
        breaks = sum(counters["graph_break"].values())
        emit(**base, kind="compile", compile_s=round(first["cond_s"] + first["uncond_s"], 2),
             cond_s=round(first["cond_s"], 2), uncond_s=round(first["uncond_s"], 2), graphs=graphs,
             graph_breaks=breaks, warmup_picture_s=round(time.perf_counter() - t0, 2))
    elif args.warmup_steps > 0:
        pipe.picture(args.warmup_steps)
    runs, pic, x = [], None, None
    for r in range(args.reps):
        pic, times, tokens, x = pipe.picture(args.steps)
        runs.append(times)
        emit(**base, kind="picture", rep=r, **{k: round(v, 5) for k, v in times.items()}, **tokens)
    if args.impl == "compile":
        from torch._dynamo.utils import counters
        graphs_after = counters["stats"].get("unique_graphs", 0)
        if graphs_after != graphs:
            note(f"torch.compile made {graphs_after - graphs} more graphs during the timed pictures (recompiles)")
        emit(**base, kind="compile_check", graphs_after_timed=graphs_after, graphs_after_warmup=graphs)
    if args.out and pic is not None:
        save_png(args.out, pic)
    med = {k: statistics.median(t[k] for t in runs) for k in runs[0]} if runs else {}
    peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else None
    emit(**base, kind="summary", reps=len(runs), **{k: round(v, 4) for k, v in med.items()},
         **(tokens if runs else {}), peak_gpu_gib=None if peak is None else round(peak, 3), png=args.out,
         loads_s=round(sum(pipe.loads.values()), 3))
    if args.vae_bf16 and x is not None:
        clock = Clock(args.device)
        pipe.vae.vae.to(torch.bfloat16)
        pipe.vae.dtype = torch.bfloat16
        h, w = args.height // 16, args.width // 16
        pipe.vae.decode(x, h, w)  # warm-up
        ts = []
        for _ in range(3):
            t0 = clock()
            pipe.vae.decode(x, h, w)
            ts.append(clock() - t0)
        emit(**base, kind="vae_bf16", decode_s=round(statistics.median(ts), 4))
    if args.mm_size > 0:
        import types
        import torch_timer
        torch_timer.matmul_rate(args.mm_size, types.SimpleNamespace(reps=10, device=args.device))
    return 0


if __name__ == "__main__":
    sys.exit(main())
