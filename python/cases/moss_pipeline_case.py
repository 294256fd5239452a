#!/usr/bin/env python3
"""The whole-pipeline reference case for TensorFold's MOSS-Image gate (tf-moss-image check pipeline).

  moss_pipeline_case.py --model DIR --out CASE.safetensors [--device cpu|cuda]
      [--prompt TEXT ...] [--negative TEXT] [--seeds 42,7,1234567,4294968530] [--width 32] [--height 48]
      [--steps 6] [--guidance 3] [--shift 5] [--gated-runs 0,1] [--bf16-reference mlx|kohakumoss]
      [--self-checks full|torch-only] [--products mlx|torch] [--template-mismatch fail|note]

DIR is a MOSS-Image pipeline folder (model_index.json, tokenizer/, text_encoder/, transformer/, vae/): the
embedded tiny one in CI, the released one on a GPU. R runs = seeds x prompts, in the order
r = seed index * len(prompts) + prompt index (so runs 0 and 1 are the first seed with each prompt). Each run
is the official MOSSImagePipeline.__call__ (docs/perf/transformer/references.md, "The sampler") computed
twice, in float32 and in torch bf16:
  prompt rows  each prompt alone in the chat format (CHAT_PREFIX + text + CHAT_SUFFIX of moss_image_case.py:
               user turn, generation prompt, enable_thinking=True), tokenizer.json's ids, the first 4096
               kept (the pipeline's truncation), through transformers' Qwen3_5TextModel as
               moss_image_case.py runs it (eager attention, torch-only DeltaNet, the small F32 params
               rounded to bf16 as transformers' bf16 load does): the float32 run a float32 encoder (the bf16
               weights widened, rows F32), the bf16 run the bf16 encoder (rows BF16). The negative prompt
               ("" by default) goes through the same template. Where the tokenizer folder has a chat
               template, its output must equal this format (else exit 1; --template-mismatch note records
               the difference in the metadata's chat_template and goes on: make_pipeline_gpu.py's random
               folder carries Qwen3's tokenizer config, whose template lacks Qwen3.5's "<think>\\n").
  noise        torch.randn((1, C, H/16, W/16), generator=torch.Generator().manual_seed(seed)), float32 on the
               CPU (torch uses the seed's low 32 bits).
  schedule     kohakumoss's moss_sigmas(steps, shift) (asserted bit-equal to moss-image-mlx's sigmas_for),
               snapped sigmas then 0; timesteps t = fp32(sigma * 1000).
  each step i  cond = v(x, t_i, prompt rows), uncond = v(x, t_i, negative rows, block 22 skipped) (guidance
               1: no negative branch); pred = uncond + g * (cond - uncond), x = x + (sigma_{i+1} - sigma_i)
               * pred, all fp32. v: the float32 run kohakumoss's MossBackbone in float32 (as
               moss_transformer_case.py's f32 reference: its loader, eager ops, TF32 off, math SDPA on CUDA,
               the official float64 timestep sinusoid); the bf16 run moss-image-mlx's default bf16 path (the
               bf16 reference of moss_transformer_case.py: every op rounded like torch eager, the official
               rounding points) on bf16 rows and bf16(x) (the model casts), its output .float().
               --bf16-reference kohakumoss (for the released geometry on a GPU, where MLX's CPU is too slow)
               uses kohakumoss's bf16 inference path instead (load_backbone in bf16 with its eager ops pinned,
               its sampler's autocast; fp32 epilogues rounded once: not the official rounding, references.md row 3). It is
               closer to float32 than the official rounding, so the gate's per-step limits (a multiple of the
               bf16 reference's distance) are tighter with it: on the tiny pipeline ours, which rounds at the
               official points, exceeds a few steps' limits by up to 1.4x (the MLX reference passes).
  picture      fp32 VAE in both runs (diffusers' AutoencoderKLFlux2 from vae/, bf16 weights widened): z = x *
               sqrt(bn.running_var + batch_norm_eps) + bn.running_mean per channel, unpatchify (channel
               c*4 + dy*2 + dx -> pixel (2y + dy, 2x + dx) of channel c), vae.decode (post_quant_conv +
               decoder), clamp(-1, 1); 8-bit = round(clip(x / 2 + 0.5, 0, 1) * 255) in float32, half to even.

The case (python/cases/case_writer.py's format, component "moss_image.pipeline"; k the run, i the step,
C = latent_channels, h = H/16, w = W/16):
  whole.r<k>.noise          F32  [C, h, w]    torch's randn
  whole.r<k>.sigmas         F32  [n + 1]      the schedule, final 0 included
  whole.r<k>.prompt.ids     I32  [Lp]         the chat-formatted prompt's ids
  whole.r<k>.negative.ids   I32  [Ln]         the chat-formatted negative prompt's ids
  whole.r<k>.latents.f32    F32  [C, h, w]    the float32 run's final x
  whole.r<k>.picture.f32    U8   [H, W, 3]    the float32 run's picture
  whole.r<k>.picture.bf16   U8   [H, W, 3]    the bf16 run's picture
  in.r<k>.prompt.rows       BF16 [Lp, text_dim]  the float32 run's rows rounded to bf16
  in.r<k>.negative.rows     BF16 [Ln, text_dim]  the same for the negative prompt
  and for the gated runs (metadata "gated_runs", default [0, 1]; the per-step velocity gate):
  in.r<k>.s<i>.latents      F32  [C, h, w]    the float32 run's x at step i (its input)
  in.r<k>.s<i>.sigma        F32  [1]          sigma_i (the timestep is fp32(sigma_i * 1000))
  steps r<k>.s<i>.cond and r<k>.s<i>.uncond (i = 0 .. n-1, cond first), each with
    f32.<step>              F32  [C, h, w]    the float32 transformer's velocity on (x_i, sigma_i, the bf16
                                              rows fed as float32 values); uncond with block 22 skipped
    bf16.<step>             BF16 [C, h, w]    the bf16 reference's velocity on (bf16(x_i), sigma_i, the same
                                              bf16 rows)
  The float32 run itself uses the float32 encoder's unrounded rows, so f32.<step> is the velocity on the
  rows the gate feeds, not exactly the one the run used (the tool prints how far apart they are).
Metadata: runs (a JSON list, one per run, of {"prompt", "negative", "seed", "width", "height", "steps",
"guidance", "shift", "skip_layers": [22]}), gated_runs, psnr_bf16_vs_f32 (dB per run; null for identical
pictures), rows_bf16_vs_f32 (per run, [prompt, negative]: ||bf16 encoder's rows - bf16(f32 rows)|| / ||bf16(f32
rows)||), psnr_bf16_transformer_only (psnr_bf16_vs_f32 with the bf16 run's rows replaced by the float32 rows rounded
to bf16: the bf16 transformer's share; no tensor of that run is written), self_check (the
numbers below), chat_prefix, chat_suffix, max_tokens, device, f32_reference, bf16_reference,
encoder_reference, vae_reference, bf16_attention, products; `reference` names each library and version.

Printed per run: PSNR(bf16 picture, f32 picture), and their mean and worst; the bf16 transformer's share.

Self-checks (before writing; nothing is written and the exit status is 1 when one fails). --self-checks
full (the default) runs them all; torch-only (the released geometry on a GPU machine without mlx, where MLX's
CPU float32 transformer would take far too long) runs the schedule, the noise and finiteness only: those need
torch and numpy (moss-image-mlx's scheduler.py and torch_randn.py are numpy files, loaded without mlx), and
with --bf16-reference kohakumoss mlx is never imported. The metadata's self_checks says which ran
({"mode", "ran", "not_run"}); self_check holds their numbers.
  - the schedule: kohakumoss's moss_sigmas equals moss-image-mlx's sigmas_for bit for bit;
  - the noise: torch's randn vs moss-image-mlx's numpy replica (torch_randn.py, fed the seed's low 32
    bits): worst |diff| <= 2e-6;
  - the float32 run's final latents vs moss-image-mlx's float32 transformer driving its own sampler lines
    (pipeline.py _sample: cond, uncond with the skip, uncond + g (cond - uncond), x + dt pred in fp32) from
    the same noise and the same float32 rows: worst |diff| / max|x| <= (1 + 2 g) * ports_tolerance(blocks)
    (moss_transformer_case.py: the two ports' per-forward float32 agreement, 2.2e-5 at 24 blocks; a
    guided prediction carries the cond and uncond errors weighted 1 + g and g; the dt sum to 1), i.e.
    1.5e-4 for the tiny pipeline;
  - the float32 run's pictures vs moss-image-mlx's fp32 VAE decoder (decode_packed, to_uint8) on the same
    final latents: no 8-bit value more than 1 apart;
  - everything finite (the float32 and bf16 runs' final latents).

Memory (the released geometry on one GPU): each model is built, used for every run and freed (del,
torch.cuda.empty_cache) before the next is built: the float32 encoder (36 GB), the bf16 encoder (18 GB), the
float32 transformer (20 GB; the runs, then the gated runs' f32.<step>), the bf16 transformer (10 GB), then
the VAE; so the peak is the float32 encoder's. TF32 is off for matmuls and cuDNN in the whole process, as
moss_transformer_case.py does. Each phase prints its elapsed time and, on CUDA, the memory held and peak.
The released case on a GPU machine: bench/generate_vs_torch/released_case.sh (one command, ~4 minutes).

Installing the references (CPU, in a venv of your own):
  python3 -m venv /tmp/refs-venv && . /tmp/refs-venv/bin/activate
  pip install torch numpy safetensors transformers tokenizers diffusers "mlx[cpu]" tqdm packaging
  pip install --no-deps kohakumoss moss-image-mlx
  (seen working: torch 2.15.0, transformers 5.25.0, tokenizers 0.23.3, diffusers 0.42.1, mlx 0.32.4,
  kohakumoss 0.1.0, moss-image-mlx 0.2.0, safetensors 0.8.0)
moss-image-mlx's package imports mlx-lm, so its dit.py, scheduler.py, torch_randn.py and vae.py are loaded
as files; so is kohakumoss's diffusion/sampling/schedule.py (its package imports kohakumoss_data). Nothing here is copied from either library.

The committed case was made with (CPU, 2 cores, ~1.5 minutes; 300 KB):
  python3 python/cases/moss_pipeline_case.py --model tests/data/tiny-pipeline \\
      --out tests/data/moss-pipeline-cases/tiny.safetensors
A rerun writes the same tensors and metadata (the safetensors header may list the metadata keys in another
order). On it: PSNR(bf16, f32) 37.26, 22.42, 35.00, 23.02, 34.81, 23.02, 34.86, 26.73 dB (mean 29.64, worst
22.42); the CJK prompt's runs are the low ones, mostly from the bf16 encoder (its rows 5.1e-2 Frobenius from
the float32 encoder's, vs 2.0e-2 for the English prompt): the bf16 transformer alone on bf16(f32 rows) gives
32.1 to 42.0 dB. Self-checks: schedule bit-identical, noise 2.4e-7, final latents vs moss-image-mlx f32
1.4e-6 to 3.2e-6 worst/max (gate 1.5e-4), pictures vs moss-image-mlx's VAE decoder 0 levels apart.
"""
import argparse
import importlib.metadata
import importlib.util
import json
import math
import os
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from moss_transformer_case import version  # noqa: E402  (the same provenance strings)

TOOL = "moss_pipeline_case"
PROMPTS = ("A red fox in the snow, watercolour.", "一座雪山下的小木屋，黄昏")
SEEDS = "42,7,1234567,4294968530"     # the last is 2^32 + 1234: torch draws it as 1234
MAX_TOKENS = 4096
SKIP_LAYERS = (22,)
TIME_SCALE = 1000.0
NOISE_TOL = 2e-6
PICTURE_TOL = 1                       # 8-bit levels, diffusers' VAE vs moss-image-mlx's on the same latents

INSTALL = ("python3 -m venv /tmp/refs-venv && . /tmp/refs-venv/bin/activate && "
           "pip install torch numpy safetensors transformers tokenizers diffusers \"mlx[cpu]\" tqdm packaging && "
           "pip install --no-deps kohakumoss moss-image-mlx")


def need(*modules):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        sys.exit(f"{TOOL}: missing {', '.join(missing)}; install the references as the top of this file says:\n"
                 f"  {INSTALL}")


def mlx_file(name):
    """One of moss-image-mlx's modules loaded as a file (its package __init__ imports mlx-lm)."""
    from moss_transformer_case import load_file_module
    spec = importlib.util.find_spec("moss_image_mlx")
    return load_file_module(f"mlx_moss_{name}", pathlib.Path(spec.submodule_search_locations[0]) / f"{name}.py")


def psnr(a, b):
    import numpy as np
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return math.inf if mse == 0 else 10.0 * math.log10(255.0 ** 2 / mse)


def db(x):
    return "inf" if math.isinf(x) else f"{x:.2f} dB"


def free(device):
    """Returns the memory of the models just deleted (a CUDA device keeps it cached otherwise)."""
    import gc
    gc.collect()
    if str(device).startswith("cuda"):
        import torch
        torch.cuda.empty_cache()


class Encoder:
    """The prompt rows: moss_image_case.py's chat format, tokenizer and Qwen3_5TextModel, float32 and bf16.
    Each precision's model is built for one rows() call and freed after it (the released encoder is 36 GB in
    float32 and 18 GB in bf16: the two are never held at once)."""

    def __init__(self, model_dir, device, template_mismatch="fail"):
        import torch
        import moss_image_case as mic
        from tokenizers import Tokenizer
        self.torch, self.mic, self.device = torch, mic, torch.device(device)
        self.template_mismatch = template_mismatch
        # fla and causal-conv1d replace transformers' torch DeltaNet paths as soon as they import; the `kernels`
        # package (Hub kernels) only where asked for (kernelize / use_kernels), which nothing here does
        self.fast = mic.refuse_fast_kernels(True)
        if set(self.fast) - {"kernels"}:
            sys.exit(f"{TOOL}: {', '.join(self.fast)} installed; transformers would use it instead of the torch "
                     "reference path. Run in an environment without it.")
        te_dir = mic.component(model_dir, "text_encoder")
        self.tok = Tokenizer.from_file(mic.find_tokenizer(model_dir))
        self.cfg = mic.text_config(te_dir)
        self.tensors, _ = mic.stored_tensors(te_dir)
        self.hidden = self.cfg.hidden_size
        self.template = self._template_check(model_dir)

    def _template_check(self, model_dir):
        """Where the tokenizer folder carries a chat template, its output must equal the fixed format."""
        try:
            from transformers import AutoTokenizer
            tok = AutoTokenizer.from_pretrained(str(pathlib.Path(model_dir) / "tokenizer"))
            if not getattr(tok, "chat_template", None):
                return "no chat template in the tokenizer folder: the fixed format used"
        except Exception as e:  # noqa: BLE001 (a tokenizer folder transformers cannot open: not checked)
            return f"not checked ({type(e).__name__})"
        for text in ("", PROMPTS[0], PROMPTS[1]):
            got = tok.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                          add_generation_prompt=True, enable_thinking=True)
            if got != self.mic.CHAT_PREFIX + text + self.mic.CHAT_SUFFIX:
                if self.template_mismatch == "note":  # a stand-in tokenizer config (a random test folder)
                    return (f"the tokenizer's chat template gives {got!r} for {text!r}, not the fixed format "
                            "(--template-mismatch note): the fixed format used")
                sys.exit(f"{TOOL}: the tokenizer's chat template gives {got!r}, not the fixed format")
        return "the tokenizer's chat template (enable_thinking=True) equals the fixed format"

    def ids(self, text):
        return self.mic.encode_ids(self.tok, text, "chat")[:MAX_TOKENS]

    def rows(self, texts, dtype):
        """{text: rows on the CPU} through the encoder built in dtype: float32 (the bf16 weights widened) ->
        F32 [L, hidden], bfloat16 -> BF16 [L, hidden]. The model is freed before returning."""
        torch = self.torch
        model = self.mic.build_model(self.cfg, self.tensors, dtype, False, self.device)
        out = {}
        with torch.no_grad():
            for text in texts:
                t = torch.tensor([self.ids(text)], dtype=torch.long, device=self.device)
                r = model(input_ids=t, use_cache=False).last_hidden_state[0]
                r = r.float().cpu().contiguous() if dtype == torch.float32 else r.to(torch.bfloat16).cpu()
                out[text] = r.contiguous()
        del model
        free(self.device)
        return out


def kohaku_bf16_class():
    from moss_transformer_case import Kohaku

    class KohakuBf16(Kohaku):
        """kohakumoss's bf16 inference path: load_backbone in bf16 (its default fp32-kept conditioning
        linears) with its eager ops, forwards under its sampler's autocast, the official float64 sinusoid."""

        def __init__(self, folder, device):
            import torch
            import kohakumoss.model.backbone as backbone
            from kohakumoss.model.io.load import load_backbone
            from kohakumoss.model.opset import FUSED, PRIMITIVES
            from kohakumoss.precision import autocast_for
            from kohakumoss.types.seqinfo import build_seqinfo
            self.torch, self.backbone, self.build_seqinfo = torch, backbone, build_seqinfo
            # its eager ops pinned, as the CPU resolves them anyway: on CUDA no Triton kernel is compiled
            # mid-run (the eager ops are the same fp32 expressions rounded once, after torch's bf16 linears)
            pinned = {name: "eager" for name in PRIMITIVES + FUSED}
            self.model, report = load_backbone(folder, device=device, dtype=torch.bfloat16, kernels=pinned)
            if not report.ok:
                sys.exit(f"{TOOL}: kohakumoss could not load {folder} in bf16")
            self.model.requires_grad_(False)
            self.device = torch.device(device)
            self.autocast = autocast_for(backbone.compute_dtype(self.model), self.device)
            self.fused = sorted(self.model.ops.fused)  # the fused kernels its loader bound (named in the metadata)

        def whole(self, latents, rows, sigma, skip):
            torch = self.torch
            c, h, w = latents.shape
            forward = self.model.bind_forward(tuple(skip))
            with torch.no_grad(), self.autocast(), self._f64_sinusoid():
                v = forward(latents.to(self.device).flatten(1).T.contiguous(), rows.to(self.device, torch.bfloat16),
                            torch.tensor([sigma], dtype=torch.float32, device=self.device),
                            self.seq(h, w, rows.shape[0]))
            return v.T.reshape(c, h, w).to(torch.bfloat16).cpu()
    return KohakuBf16


def sample(velocity, noise, sigmas, rows, negative, guidance, record=None):
    """The official loop in fp32 on torch tensors [C, h, w]; velocity(x, rows, sigma, skip) -> F32."""
    import torch
    x = noise.clone()
    for i in range(len(sigmas) - 1):
        sigma = float(sigmas[i])
        if record is not None:
            record.append(x.clone())
        cond = velocity(x, rows, sigma, ())
        pred = cond
        if guidance != 1.0:
            uncond = velocity(x, negative, sigma, SKIP_LAYERS)
            pred = uncond + guidance * (cond - uncond)
        dt = sigmas[i + 1] - sigmas[i]  # a float32 0-d tensor
        x = x + dt * pred
        assert x.dtype == torch.float32
    return x


class Vae:
    """diffusers' AutoencoderKLFlux2 in float32: the pipeline's latents -> 8-bit picture."""

    def __init__(self, folder, device):
        import torch
        from diffusers import AutoencoderKLFlux2
        self.torch, self.device = torch, torch.device(device)
        self.vae = AutoencoderKLFlux2.from_pretrained(str(folder), torch_dtype=torch.float32).to(self.device).eval()

    def picture(self, x):
        import numpy as np
        torch, vae = self.torch, self.vae
        z = x[None].to(self.device, torch.float32)
        bn, eps = vae.bn, vae.config.batch_norm_eps
        z = z * (bn.running_var + eps).sqrt().to(z).view(1, -1, 1, 1) + bn.running_mean.to(z).view(1, -1, 1, 1)
        b, c, h, w = z.shape
        z = z.reshape(b, c // 4, 2, 2, h, w).permute(0, 1, 4, 2, 5, 3).reshape(b, c // 4, 2 * h, 2 * w)
        with torch.no_grad():
            img = vae.decode(z, return_dict=False)[0].clamp(-1, 1).float()
        img = img[0].permute(1, 2, 0).cpu().numpy()  # [H, W, 3] float32
        return np.round(np.clip(img / 2 + 0.5, 0, 1) * 255).astype(np.uint8)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="a MOSS-Image pipeline folder (model_index.json)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                    help="the encoder's, the torch transformers' and the VAE's device (MLX runs on the CPU)")
    ap.add_argument("--prompt", action="append", help=f"repeatable; default {list(PROMPTS)}")
    ap.add_argument("--negative", default="")
    ap.add_argument("--seeds", default=SEEDS)
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--height", type=int, default=48)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--guidance", type=float, default=3.0)
    ap.add_argument("--shift", type=float, default=5.0)
    ap.add_argument("--gated-runs", default="0,1", help="runs whose steps are written for the velocity gate")
    ap.add_argument("--bf16-reference", default="mlx", choices=("mlx", "kohakumoss"))
    ap.add_argument("--self-checks", default="full", choices=("full", "torch-only"),
                    help="full: all (moss-image-mlx's float32 transformer and VAE decoder need mlx); torch-only: "
                         "the schedule, the noise and finiteness (numpy and torch; for the released geometry)")
    ap.add_argument("--products", default="mlx", choices=("mlx", "torch"),
                    help="moss-image-mlx's linear products: MLX's CPU gemm or torch's float32 CPU matmul "
                         "(mlx_torch_products.py; for the released geometry)")
    ap.add_argument("--template-mismatch", default="fail", choices=("fail", "note"),
                    help="a tokenizer chat template that differs from the fixed format: fail, or note it in the "
                         "metadata (chat_template) and go on (a random folder with a stand-in tokenizer config, "
                         "as make_pipeline_gpu.py's Qwen3 one, which lacks Qwen3.5's '<think>\n')")
    args = ap.parse_args()
    full = args.self_checks == "full"
    use_mlx = full or args.bf16_reference == "mlx"   # an MLX model runs: mlx is imported, else never
    need("torch", "numpy", "safetensors", "transformers", "tokenizers", "diffusers", "moss_image_mlx",
         "kohakumoss", *(("mlx",) if use_mlx else ()))
    if args.products == "torch" and not use_mlx:
        sys.exit(f"{TOOL}: --products torch routes moss-image-mlx's products; no MLX model runs with "
                 "--self-checks torch-only --bf16-reference kohakumoss")
    import numpy as np
    import torch
    from case_writer import CaseWriter
    from moss_transformer_case import load_file_module
    from moss_transformer_case import Kohaku, MlxRef, distance, gate_measures, mlx_dit, ports_tolerance
    mx = None
    if use_mlx:
        import mlx.core as mx

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit(f"{TOOL}: --device cuda but torch sees no CUDA device")
    if args.width <= 0 or args.height <= 0 or args.width % 16 or args.height % 16:
        sys.exit(f"{TOOL}: --width and --height must be positive multiples of 16")
    folder = pathlib.Path(args.model)
    if not (folder / "model_index.json").exists():
        sys.exit(f"{TOOL}: {folder} has no model_index.json; give the pipeline folder")
    prompts = args.prompt or list(PROMPTS)
    seeds = [int(s) for s in args.seeds.split(",") if s]
    gated = [int(s) for s in args.gated_runs.split(",") if s]
    runs = [(seed, prompt) for seed in seeds for prompt in prompts]
    if not gated or any(not 0 <= k < len(runs) for k in gated):
        sys.exit(f"{TOOL}: --gated-runs must name runs 0 .. {len(runs) - 1}")
    g = float(args.guidance)
    h, w = args.height // 16, args.width // 16
    t_start = time.time()

    def stamp(what):
        mem = ""
        if args.device == "cuda":
            mem = (f"; GPU {torch.cuda.memory_allocated() / 2**30:.1f} GiB held, peak "
                   f"{torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")
        print(f"{TOOL}: +{time.time() - t_start:.1f} s {what}{mem}", flush=True)

    tdir = folder / "transformer"
    config = json.loads((tdir / "config.json").read_text())
    C, layers = config["latent_channels"], config["num_layers"]
    if any(i >= layers for i in SKIP_LAYERS):
        sys.exit(f"{TOOL}: the transformer has {layers} blocks; the pipeline skips block {SKIP_LAYERS[0]}")
    enc = Encoder(str(folder), args.device, args.template_mismatch)
    if enc.hidden != config["text_dim"]:
        sys.exit(f"{TOOL}: text_dim {config['text_dim']} is not the encoder's hidden size {enc.hidden}")
    # moss-image-mlx's schedule and torch-randn replica are numpy files (no mlx); its VAE decoder needs mlx
    mlx_sched, mlx_randn = mlx_file("scheduler"), mlx_file("torch_randn")

    reference = {"torch": torch.__version__, "transformers": version("transformers"),
                 "tokenizers": version("tokenizers"), "diffusers": version("diffusers"),
                 "kohakumoss": version("kohakumoss"), "mlx": version("mlx"),
                 "moss-image-mlx": version("moss-image-mlx"), "safetensors": version("safetensors")}
    case = CaseWriter("moss_image.pipeline", reference)
    print(f"{TOOL}: {len(runs)} runs ({len(seeds)} seeds x {len(prompts)} prompts) at {args.width}x{args.height}, "
          f"{args.steps} steps, guidance {g:g}, shift {args.shift:g}, skip {list(SKIP_LAYERS)}; transformer "
          f"{layers} blocks, dim {config['dim']}; bf16 reference {args.bf16_reference}; self-checks "
          f"{args.self_checks}; device {args.device}; {enc.template}")

    # the schedule (the same for every run); kohakumoss's schedule.py as a file (its package imports its data stack)
    spec = importlib.util.find_spec("kohakumoss")
    moss_sigmas = load_file_module("kohakumoss_schedule", pathlib.Path(spec.submodule_search_locations[0]) / "diffusion"
                                   / "sampling" / "schedule.py").moss_sigmas
    sig = moss_sigmas(args.steps, args.shift).to(torch.float32)
    sig_mlx = mlx_sched.sigmas_for(args.steps, args.shift)
    schedule_ok = sig.numpy().tobytes() == np.asarray(sig_mlx, dtype=np.float32).tobytes()
    print(f"  schedule: {sig.numel() - 1} sigmas {[float(s) for s in sig]}; kohakumoss vs moss-image-mlx "
          f"{'bit-identical' if schedule_ok else 'DIFFERENT  FAIL'}")
    timesteps = (sig[:-1] * TIME_SCALE).to(torch.float32)
    assert np.array_equal(timesteps.numpy(), mlx_sched.timesteps_for(sig_mlx))
    ports_tol = (1.0 + 2.0 * g) * ports_tolerance(layers)

    # the encoders, one precision at a time
    texts = list(dict.fromkeys([*prompts, args.negative]))
    rows32 = enc.rows(texts, torch.float32)
    stamp("float32 encoder: rows made, model freed")
    rows16 = enc.rows(texts, torch.bfloat16)
    stamp("bf16 encoder: rows made, model freed")
    noises = [torch.randn((1, C, h, w), generator=torch.Generator().manual_seed(seed))[0].contiguous()
              for seed, _ in runs]
    branches = lambda k: (("cond", rows32[runs[k][1]], ()), ("uncond", rows32[args.negative], SKIP_LAYERS))  # noqa: E731

    # the float32 transformer: each run's sampler, then the gated runs' steps on the bf16-rounded rows
    f32 = Kohaku(str(tdir), args.device)
    x32, lat_in, used, a32 = {}, {}, {}, {}
    for k, (seed, prompt) in enumerate(runs):
        lat_in[k] = []

        def v32(x, rows, sigma, skip, k=k):
            v = f32.whole(x, rows, sigma, skip)
            used[k, len(lat_in[k]) - 1, "uncond" if skip else "cond"] = v  # the run's own velocity (printed)
            return v

        x32[k] = sample(v32, noises[k], sig, rows32[prompt], rows32[args.negative], g, lat_in[k])
        if k in gated:
            for i, x in enumerate(lat_in[k]):
                for branch, rows, skip in branches(k):
                    a32[k, i, branch] = f32.whole(x, rows.to(torch.bfloat16), float(sig[i]), skip)
                    if (k, i, branch) not in used:  # guidance 1: the run had no uncond branch
                        used[k, i, branch] = f32.whole(x, rows, float(sig[i]), skip)
    del f32, v32
    free(args.device)
    stamp("float32 transformer: runs sampled, gated steps made, model freed")

    # the bf16 reference: each run's sampler on the bf16 rows and on bf16(f32 rows), the gated runs' steps
    dit = mlx_dit() if use_mlx else None
    mlx32 = None
    if args.bf16_reference == "mlx":
        bf = MlxRef(dit, str(tdir))
    else:
        bf = kohaku_bf16_class()(str(tdir), args.device)
    if args.products == "torch":
        from mlx_torch_products import route_linear_products
        mlx32 = MlxRef(dit, str(tdir), dtype=mx.float32)
        models = (bf.model, mlx32.model) if args.bf16_reference == "mlx" else (mlx32.model,)
        route_linear_products(mlx32.model, models)

    def v16(x, rows, sigma, skip):
        return bf.whole(x, rows, sigma, skip).float()

    x16, x16t, b16 = {}, {}, {}
    for k, (seed, prompt) in enumerate(runs):
        x16[k] = sample(v16, noises[k], sig, rows16[prompt], rows16[args.negative], g)
        # printed (and in the metadata), not a case tensor: the bf16 transformer alone, on the float32 rows
        # rounded to bf16, to tell its share of the PSNR from the bf16 encoder's
        x16t[k] = sample(v16, noises[k], sig, rows32[prompt].to(torch.bfloat16),
                         rows32[args.negative].to(torch.bfloat16), g)
        if k in gated:
            for i, x in enumerate(lat_in[k]):
                for branch, rows, skip in branches(k):
                    b16[k, i, branch] = bf.whole(x, rows.to(torch.bfloat16), float(sig[i]), skip)
    bf_fused = getattr(bf, "fused", None)
    del bf
    free(args.device)
    stamp(f"bf16 transformer ({args.bf16_reference}): runs sampled, gated steps made, model freed")

    # self-check (full): moss-image-mlx's float32 transformer through its sampler's lines
    x_mlx = {}
    if full:
        if mlx32 is None:
            mlx32 = MlxRef(dit, str(tdir), dtype=mx.float32)
        m = mlx32.model
        for k, (seed, prompt) in enumerate(runs):
            lat = mx.array(noises[k].numpy())[None]
            pos, neg = mx.array(rows32[prompt].numpy())[None], mx.array(rows32[args.negative].numpy())[None]
            for i, t in enumerate(mlx_sched.timesteps_for(sig_mlx)):
                cond = m(lat, float(t), pos).astype(mx.float32)
                pred = cond
                if g != 1.0:
                    uncond = m(lat, float(t), neg, list(SKIP_LAYERS)).astype(mx.float32)
                    pred = uncond + g * (cond - uncond)
                lat = lat.astype(mx.float32) + mx.array(sig_mlx[i + 1] - sig_mlx[i], dtype=mx.float32) * pred
            x_mlx[k] = torch.from_numpy(np.array(lat[0]))
        stamp("moss-image-mlx float32 self-check runs")
    del mlx32

    # the pictures: diffusers' VAE in float32 (and, full, moss-image-mlx's decoder on the float32 latents)
    vae = Vae(folder / "vae", args.device)
    pic32, pic16, pic16t, pic_mlx = {}, {}, {}, {}
    if full:
        mlx_vae = mlx_file("vae")
        vae_mlx = mlx_vae.load_vae_decoder(folder / "vae")
    for k in range(len(runs)):
        pic32[k], pic16[k], pic16t[k] = vae.picture(x32[k]), vae.picture(x16[k]), vae.picture(x16t[k])
        if full:
            pic_mlx[k] = mlx_vae.to_uint8(vae_mlx.decode_packed(mx.array(x32[k].numpy())[None])[0])
    del vae
    free(args.device)
    stamp("pictures decoded")

    ok = schedule_ok
    meta_runs, psnrs, psnrs_t, checks, rows_d = [], [], [], [], []
    for k, (seed, prompt) in enumerate(runs):
        p = f"r{k}."
        ids_p, rows_p32, rows_p16 = enc.ids(prompt), rows32[prompt], rows16[prompt]
        ids_n, rows_n32 = enc.ids(args.negative), rows32[args.negative]
        noise = noises[k]
        noise_mlx = mlx_randn.randn((1, C, h, w), seed & 0xFFFFFFFF)[0]
        d_noise = float(np.abs(noise.numpy() - noise_mlx).max())
        finite = all(bool(torch.isfinite(t).all()) for t in (x32[k], x16[k]))
        check = {"run": k, "noise_worst": d_noise}
        good = d_noise <= NOISE_TOL and finite
        if full:
            d_ports = distance(x_mlx[k], x32[k])
            d_pic = int(np.abs(pic_mlx[k].astype(np.int32) - pic32[k].astype(np.int32)).max())
            good = good and d_ports[0] <= ports_tol and d_pic <= PICTURE_TOL
            check.update({"latents_vs_mlx_f32": list(d_ports), "picture_vs_mlx_vae_levels": d_pic})
        ok &= good
        db_k, db_t = psnr(pic16[k], pic32[k]), psnr(pic16t[k], pic32[k])
        psnrs.append(db_k)
        psnrs_t.append(db_t)
        checks.append(check)
        print(f"\nrun r{k}: seed {seed}, prompt {prompt!r} ({len(ids_p)} ids), negative {args.negative!r} "
              f"({len(ids_n)} ids); |x| max {x32[k].abs().max().item():.3g}")
        print(f"  noise vs moss-image-mlx's replica        {d_noise:9.2e}  (gate {NOISE_TOL:g})"
              f"{'' if finite else '  NOT FINITE'}")
        if full:
            print(f"  final latents vs moss-image-mlx f32      {d_ports[0]:9.2e} {d_ports[1]:9.2e}  (worst/max, "
                  f"Frobenius; gate {ports_tol:.2g} worst)")
            print(f"  picture vs moss-image-mlx's VAE decoder  {d_pic:9d}  levels (gate {PICTURE_TOL})")
        print(f"  self-checks ({args.self_checks})                   {'ok' if good else 'FAIL'}")
        d16 = distance(x16[k], x32[k])
        print(f"  bf16 run's latents vs f32 run's          {d16[0]:9.2e} {d16[1]:9.2e}")
        print(f"  PSNR(bf16 picture, f32 picture)          {db(db_k)}  (bf16 transformer alone, on bf16(f32 rows): "
              f"{db(db_t)}; the bf16 encoder's rows vs the f32 one's {distance(rows_p16, rows_p32)[1]:.2e} Frobenius)")

        case.whole(p + "noise", noise)
        case.whole(p + "sigmas", sig.clone().contiguous())
        case.whole(p + "prompt.ids", torch.tensor(ids_p, dtype=torch.int32))
        case.whole(p + "negative.ids", torch.tensor(ids_n, dtype=torch.int32))
        case.whole(p + "latents.f32", x32[k].contiguous())
        case.whole(p + "picture.f32", torch.from_numpy(pic32[k].copy()))
        case.whole(p + "picture.bf16", torch.from_numpy(pic16[k].copy()))
        rp, rn = rows_p32.to(torch.bfloat16).contiguous(), rows_n32.to(torch.bfloat16).contiguous()
        case.input(p + "prompt.rows", rp)
        case.input(p + "negative.rows", rn)
        rows_d.append([round(distance(rows16[t], r.float())[1], 6) for t, r in ((prompt, rp), (args.negative, rn))])
        if k in gated:
            print(f"  gate steps (cosine error, worst position) of bf16.<step> from f32.<step>; f32.<step> on the "
                  f"bf16 rows vs on the run's f32 rows")
            for i, x in enumerate(lat_in[k]):
                s = f"r{k}.s{i}"
                case.input(s + ".latents", x.contiguous())
                case.input(s + ".sigma", sig[i:i + 1].clone().contiguous())
                for branch in ("cond", "uncond"):
                    a, b = a32[k, i, branch], b16[k, i, branch]
                    cos, row = gate_measures(b, a, positions=True)
                    rcos, rrow = gate_measures(a, used[k, i, branch], positions=True)
                    print(f"    {s + '.' + branch:<16} {cos:9.2e} {row:9.2e} | {rcos:9.2e} {rrow:9.2e}")
                    case.step(f"{s}.{branch}", a.contiguous(), b.to(torch.bfloat16).contiguous())
        meta_runs.append({"prompt": prompt, "negative": args.negative, "seed": seed, "width": args.width,
                          "height": args.height, "steps": args.steps, "guidance": g, "shift": args.shift,
                          "skip_layers": list(SKIP_LAYERS)})

    finite_db = [x for x in psnrs if not math.isinf(x)]
    mean = sum(finite_db) / len(finite_db) if finite_db else math.inf
    print(f"\nPSNR(bf16 picture, f32 picture) per run: {', '.join(db(x) for x in psnrs)}; "
          f"mean {db(mean)}{' (finite ones)' if len(finite_db) < len(psnrs) else ''}, worst {db(min(psnrs))}")
    print(f"  the bf16 transformer alone (on bf16(f32 rows)): {', '.join(db(x) for x in psnrs_t)}; worst "
          f"{db(min(psnrs_t))}")
    if not ok:
        sys.exit(f"{TOOL}: self-check FAILED; nothing written")

    if args.bf16_reference == "mlx":
        bf16_ref = (f"moss-image-mlx {reference['moss-image-mlx']} default bf16 path on mlx {reference['mlx']} "
                    f"({mx.default_device()}): bf16 weights, every op rounded like torch eager (the official "
                    "rounding points), on bf16 rows and bf16(x); its velocity .float()")
    else:
        bf16_ref = (f"kohakumoss {reference['kohakumoss']} bf16 inference path ({args.device}): load_backbone in "
                    "bf16 with its eager ops, its sampler's autocast, fp32 epilogues rounded once (not the official rounding "
                    "points); the official float64 sinusoid; its velocity .float()")
        if bf_fused:
            bf16_ref += f"; fused kernels bound: {', '.join(bf_fused)}"
    if full:
        self_check = {"schedule": "kohakumoss moss_sigmas == moss-image-mlx sigmas_for, bit for bit",
                      "noise_tol": NOISE_TOL, "latents_tol": ports_tol, "picture_tol_levels": PICTURE_TOL,
                      "runs": checks}
        ran = ["schedule", "noise", "finite", "latents_vs_mlx_f32", "picture_vs_mlx_vae"]
        not_run = []
    else:
        self_check = {"schedule": ("kohakumoss moss_sigmas == moss-image-mlx sigmas_for (its numpy scheduler.py), "
                                   "bit for bit"), "noise_tol": NOISE_TOL, "runs": checks}
        ran = ["schedule", "noise", "finite"]
        not_run = ["latents_vs_mlx_f32", "picture_vs_mlx_vae"]
    meta = {
        "runs": meta_runs, "gated_runs": gated, "psnr_bf16_vs_f32": [None if math.isinf(x) else round(x, 4) for x in psnrs],
        "rows_bf16_vs_f32": rows_d,
        "psnr_bf16_transformer_only": [None if math.isinf(x) else round(x, 4) for x in psnrs_t],
        "self_check": self_check,
        "self_checks": {"mode": args.self_checks, "ran": ran, "not_run": not_run},
        "chat_prefix": enc.mic.CHAT_PREFIX, "chat_suffix": enc.mic.CHAT_SUFFIX, "chat_template": enc.template,
        "max_tokens": MAX_TOKENS, "device": args.device,
        "f32_reference": (f"kohakumoss {reference['kohakumoss']} MossBackbone in float32 on torch "
                          f"{torch.__version__} ({args.device}, TF32 off, its eager ops), the official float64 "
                          "timestep sinusoid; the sampler loop in torch fp32"),
        "bf16_reference": bf16_ref,
        "encoder_reference": (f"transformers {reference['transformers']} Qwen3_5TextModel (eager attention, "
                              "torch-only DeltaNet; A_log and linear_attn.norm.weight rounded to bf16): float32 "
                              "run the bf16 weights widened to float32, bf16 run in bf16"
                              + (f"; installed, never requested: {', '.join(enc.fast)}" if enc.fast else "")),
        "vae_reference": (f"diffusers {reference['diffusers']} AutoencoderKLFlux2 in float32 (both runs): bn "
                          "de-normalisation, unpatchify, decode, clamp(-1, 1), round(clip(x / 2 + 0.5) * 255)"),
        "bf16_attention": ("MLX's CPU scaled_dot_product_attention on bf16: q * scale -> bf16, scores -> bf16, "
                           "softmax (fp32 inside) -> bf16, probabilities @ v -> bf16; the official SDPA keeps "
                           "scores and softmax in fp32") if args.bf16_reference == "mlx" else "torch SDPA",
        "products": args.products if use_mlx else "no moss-image-mlx model ran",
    }
    for key, value in meta.items():
        case.meta(key, value)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    case.write(str(out))
    stamp(f"wrote {out}: {len(runs)} runs, {len(case.steps)} gate steps, {os.path.getsize(out):,} bytes; "
          f"self-checks ({args.self_checks}: {', '.join(ran)}) ok")


if __name__ == "__main__":
    main()
