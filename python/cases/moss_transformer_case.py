#!/usr/bin/env python3
"""Reference cases for TensorFold's MOSS-Image transformer gate, and a tiny random checkpoint.

  moss_transformer_case.py tiny --out DIR [--seed N]
  moss_transformer_case.py case --model DIR --out CASE.safetensors [--device cpu|cuda] [--seed N]
      [--sigma S] [--products mlx|torch]

`tiny` writes a random MOSSImageTransformer in the official diffusers layout (what
docs/perf/transformer/references.md lists): DIR/config.json (`_class_name` MOSSImageTransformer,
`_diffusers_version` 0.38.0 as kohakumoss's exporter writes it, dim 64, num_layers 4, num_heads 2
(head_dim 32: 4 RoPE axes of 4 bands), ffn_dim 96, text_dim 48, latent_channels 16, freq_dim 32,
rope_base 10000.0) and DIR/diffusion_pytorch_model.safetensors with the official key names and shapes:
every weight BF16 (as the released file) and `rope.bands` F32 [head_dim / 8] = 1 / 10000^(j / 4)
computed in fp32 (the released file stores this buffer; both ports recompute it). Weights are drawn
from torch's CPU generator seeded with --seed, at scales that keep activations in a realistic range:
norm weights 1 + 0.1 N(0, 1), q_norm / k_norm 1.4 + 0.1 N(0, 1) (sharper attention: a position one
off moves a joint block's output ~7e-2 in worst row, several times bf16 noise); matrices N(0, 1) *
gain / sqrt(fan_in) (gain 1, but time_embedding.0 2, the modulations 0.5, proj.o and the text blocks'
proj 2.5, ffn_down 0.15, so attention and FFN both move the residual stream); biases 0.1 N(0, 1) (the
modulations' 0.2): the modulation chunks have rms ~0.43 (1 + scale spans about -0.2..2, gates up to
+-1, not near 0); the SiTU inputs reach its knees (ffn_up_gate's hidden half gain 8: |u| up to ~35;
its gate half and ffn_gate gain 3; ffn_up 8).

`case` writes the stepwise case (python/cases/case_writer.py's format, component
"moss_image.transformer") for one guidance step: two samples with the same latents and sigma,
  s0: the cond branch, 7 prompt rows, no block skipped
  s1: the uncond branch, 3 prompt rows, block 22 skipped at 42 blocks (the pipeline's negative branch),
      block num_layers // 2 otherwise
latents [latent_channels, 6, 5] (h != w; h even, so the image positions are half-integers) and sigma
the training grid's 0.933 (torch.linspace(1, 0.001, 1000)[67] in fp32 = 0.93299997; t = fp32(sigma *
1000) = 932.99994, not an integer, as many of the pipeline's timesteps are not).

Tensors (k = 0, 1; h, w the latent height and width, N = h * w image tokens, L_k the text length,
D = dim, C = latent_channels):
  in.s<k>.latents   F32  [C, h, w]   the latents (the same for both samples)
  in.s<k>.rows      BF16 [L_k, text_dim]  the prompt rows
  in.s<k>.sigma     F32  [1]         sigma; the timestep is t = fp32(sigma * 1000)
  steps, in run order, each with
    f32.<step>      F32   the float32 reference's output
    bf16.<step>     BF16  the bf16 reference's output of the step alone on bf16(its f32 input)
  s<k>.time         [8, D]     input sigma. Rows 0-5: shared_block_modulation(time) chunks shift_a,
                               scale_a, gate_a, shift_f, scale_f, gate_f; rows 6-7:
                               video_head_modulation(time) chunks shift, scale; time =
                               time_embedding.2(SiLU(time_embedding.0(sinusoid(t)))), the sinusoid
                               [cos | sin] in float64 (the official), then cast to the model dtype
  s<k>.video_embed  [N, D]     input the latents: token n = y * w + x is latents[:, y, x] through
                               video_embedder (bf16 reference: bf16(latents), as the official casts)
  s<k>.text_embed   [L_k, D]   input the rows: text_embedder.proj(rows)
  s<k>.text.0       [L_k, D]   text block 0 on f32.s<k>.text_embed, text positions (0, i, 0, 0)
  s<k>.text.1       [L_k, D]   text block 1 on f32.s<k>.text.0
  s<k>.block.<i>    [N + L_k, D]  joint block i alone; input the previous joint x (block 0's is
                               [f32.s<k>.video_embed ; f32.s<k>.text.1], image rows first; a later
                               block's is the previous block's output) and rows 0-5 of f32.s<k>.time;
                               RoPE positions image (y, x) -> (0, L_k, y - (h-1)/2, x - (w-1)/2),
                               text i -> (0, i, 0, 0). A skipped block has no step: the next block's
                               input is the previous block's output.
  s<k>.head         F32 [C, h, w]  the velocity: final_norm_video(x[:N]) * (1 + scale) + shift ->
                               final_linear_video, transposed; input the last block's output and
                               rows 6-7 of f32.s<k>.time (bf16 reference: both rounded to bf16; its
                               output BF16 [C, h, w])
  whole.s<k>.bf16   BF16 [C, h, w]  the bf16 reference's whole forward (printed distances)
Metadata: dim, num_layers, num_heads, head_dim, ffn_dim, text_dim, latent_channels, freq_dim,
rope_base, text_blocks, rope_axes, rope_bands, eps, height, width, sigma, timestep, samples (a JSON
list of {"name", "text_length", "skip_layers"}), f32_reference, bf16_reference, bf16_attention,
device, seed; `reference` names each library and version.

The float32 reference is kohakumoss's MossBackbone loaded in float32 (its loader, its eager torch ops
pinned: no Triton/fused kernels; TF32 off; on CUDA torch's math SDPA), called step by step:
conditioning(sigma) -> time, video_embedder, text_embedder.proj, text_embedder.blocks[j],
layers[i](x, BlockCtx), head: the functions its whole forward calls. Its fp32 timestep sinusoid is
replaced by the official float64 one (references.md, disagreement 1). The tool asserts that the steps chained equal kohakumoss's own whole
forward (bind_forward(skip_layers)) to float32 precision, and that moss-image-mlx's float32 forward
agrees with them within 1e-5 up to 5 blocks (the two ports' agreement gate,
python/cases/moss_transformer_agree.py; more blocks: ports_tolerance).

The bf16 reference is moss-image-mlx's default bf16 path (the checkpoint's bf16 weights, every op
rounding like torch eager: the official's rounding points, references.md "Where the official code
rounds to bf16"), each step called alone through the port's own modules: modulation(t),
video_embedder, text_embedder.proj, text_embedder.blocks[j](x, rope), layers[i](x, rope, mod), and for
the head final_norm_video, (1 + scale), *, + shift, final_linear_video (the lines of its __call__).
Arrays cross between torch and MLX as numpy float32 holding bf16 values (exact). kohakumoss's bf16
path is not used: it fuses ops into fp32 and rounds once, which is not the official rounding.
Known difference from the official: on the CPU MLX's scaled_dot_product_attention stages bf16 inputs
as q * scale -> bf16, scores -> bf16, softmax (fp32 inside) -> bf16, probabilities @ v -> bf16 (the
official SDPA keeps scores and softmax in fp32). The metadata says so (`bf16_attention`) and the tool
prints how far that moves each step's bf16 distance from the float32 reference: on the committed case
no more than bf16 noise does (worst row 1.59e-2 vs 1.68e-2 with fp32-inside attention at s0.block.0,
9.28e-3 vs 1.09e-2 at s0.text.0; cosine within 25%), in both directions.

Self-check (always, before writing): per sample, the f32 steps chained vs kohakumoss's whole float32
forward (must be <= 1e-6 worst |diff| / max|v|), vs moss-image-mlx's float32 forward (<= 1e-5 up to 5
blocks, growing as the square root of the blocks past that: 2.9e-5 at the released 42; ports_tolerance), and
the bf16 steps chained (each step on the previous bf16 step's output) vs the bf16 whole forward (must
be within bf16 noise, <= 2^-7 relative Frobenius); nothing is written unless all pass. Printed per
step: rms of f32.<step> and, in the gate's measures (cosine error, worst row; the head per position),
the distance from f32.<step> of bf16.<step>, of bf16 rounding of f32.<step>, and of the bf16 step
with an fp32-inside attention (how much MLX's bf16-staged CPU attention adds; not written).

--products torch (for the released geometry): MLX's Linux CPU gemms are slow (its float32 through the
reference BLAS it bundles, bf16 single-threaded), so a 42-block forward takes minutes and the case ten of
them; this routes every MLX linear's product through torch's float32 CPU matmul on all cores: the same
fp32 sums rounded once to bf16, in another order (python/cases/mlx_torch_products.py). The steps' gate
distances stay the default path's (the order is float32 noise, far below bf16 rounding), though many of
a step's bf16 values differ from it by an ulp. The metadata then holds `products` "torch".

Installing the references (CPU, in a venv of your own; ~5 GB, torch's wheel brings CUDA libraries):
  python3 -m venv /tmp/refs-venv && . /tmp/refs-venv/bin/activate
  pip install torch numpy safetensors "mlx[cpu]" tqdm packaging
  pip install --no-deps kohakumoss moss-image-mlx
  (seen working: torch 2.15.0, mlx 0.32.4, kohakumoss 0.1.0, moss-image-mlx 0.2.0, safetensors 0.8.0)
moss-image-mlx's package imports mlx-lm, so its dit.py is loaded as a file. Nothing here is copied
from either library.

The committed files were made with (CPU, ~10 s):
  python3 python/cases/moss_transformer_case.py tiny --out tests/data/moss-transformer-tiny --seed 0
  python3 python/cases/moss_transformer_case.py case --model tests/data/moss-transformer-tiny \\
      --out tests/data/moss-transformer-cases/tiny.safetensors --seed 0
A rerun writes the same tensors and metadata (the safetensors header may list the metadata keys in
another order).
"""
import argparse
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import sys

from moss_transformer_weights import RELEASED, TEXT_BLOCKS, TINY, WEIGHTS, make_tiny, official_shapes  # noqa: F401

TOOL = "moss_transformer_case"
ROPE_AXES = 4
EPS = 1e-6
TIME_SCALE = 1000.0
HEIGHT, WIDTH = 6, 5
GRID_INDEX = 67                       # sigma: the training grid's 0.933, fp32 0.93299997 (t = 932.99994)
SAMPLES = ((7, False), (3, True))     # (text length, skip the middle block), cond then uncond

CHAIN_TOL = 1e-6                      # f32 steps chained vs the same port's whole forward
PORTS_TOL = 1e-5                      # kohakumoss float32 vs moss-image-mlx float32, up to PORTS_DEPTH blocks
PORTS_DEPTH = 5                       # the blocks of the agreement study that set PORTS_TOL
BF16_CHAIN_TOL = 2.0 ** -7            # bf16 steps chained vs the bf16 whole forward

INSTALL = ("python3 -m venv /tmp/refs-venv && . /tmp/refs-venv/bin/activate && "
           "pip install torch numpy safetensors \"mlx[cpu]\" tqdm packaging && "
           "pip install --no-deps kohakumoss moss-image-mlx")


def need(*modules):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        sys.exit(f"{TOOL}: missing {', '.join(missing)}; install the references as the top of this file says:\n"
                 f"  {INSTALL}")


def version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


# ---------------------------------------------------------------------------------------------------
# case: the references

def load_file_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mlx_dit():
    spec = importlib.util.find_spec("moss_image_mlx")  # the folder, without running its __init__ (mlx-lm)
    return load_file_module("mlx_moss_dit", pathlib.Path(spec.submodule_search_locations[0]) / "dit.py")


def sinusoid_f64(t, freq_dim):
    """The official timestep sinusoid: [cos | sin] of float64(t) * 10000^(-k/half), in float64."""
    import torch
    half = freq_dim // 2
    freq = 10000.0 ** (-torch.arange(half, dtype=torch.float64, device=t.device) / half)
    phase = t.double()[:, None] * freq
    return torch.cat((phase.cos(), phase.sin()), -1)


def distance(a, b):
    """(worst |a - b| / max|b|, ||a - b|| / ||b||) in float64."""
    a, b = a.double().cpu(), b.double().cpu()
    d = (a - b).abs()
    return (d.max() / b.abs().max()).item(), ((a - b).norm() / b.norm()).item()


def gate_measures(got, ref, positions=False):
    """The gate's measures (src/check/compare.h): cosine error over all elements, worst row's
    ||got_r - ref_r|| / ||ref_r||; rows the leading axis, or the positions of a [C, h, w] tensor."""
    a, b = got.double().cpu(), ref.double().cpu()
    if positions:
        a, b = a.flatten(1).T, b.flatten(1).T
    a, b = a.reshape(a.shape[0], -1), b.reshape(b.shape[0], -1)
    cos = 1.0 - (a * b).sum().item() / (a.norm().item() * b.norm().item())
    rows = ((a - b).norm(dim=1) / b.norm(dim=1)).max().item()
    return cos, rows


class Kohaku:
    """The float32 reference: kohakumoss's MossBackbone in float32, eager ops, float64 sinusoid."""

    def __init__(self, folder, device):
        import torch
        import kohakumoss.model.backbone as backbone
        from kohakumoss.model.io.load import load_backbone
        from kohakumoss.model.opset import FUSED, PRIMITIVES
        from kohakumoss.model.stream import StreamConfig
        from kohakumoss.types.context import BlockCtx
        from kohakumoss.types.seqinfo import build_seqinfo

        self.torch, self.backbone, self.BlockCtx, self.build_seqinfo = torch, backbone, BlockCtx, build_seqinfo
        pinned = {name: "eager" for name in PRIMITIVES + FUSED}  # no fused eager kernel exists: none bound
        self.model, report = load_backbone(folder, device=device, dtype=torch.float32, keep_fp32=(),
                                           kernels=pinned)
        if not report.ok:
            sys.exit(f"{TOOL}: kohakumoss could not load {folder}: missing {report.missing}, "
                     f"unexpected {report.unexpected}")
        self.model.requires_grad_(False)
        if self.model.stream != StreamConfig() or set(self.model.residual_scale) != {1.0}:
            sys.exit(f"{TOOL}: kohakumoss's stream config is not the plain one")
        fused = self.model.ops.fused
        if fused:
            sys.exit(f"{TOOL}: kohakumoss bound fused kernels {sorted(fused)}; the reference needs its eager ops")
        self.device = torch.device(device)

    def exact(self):
        """The context of every float32 call: torch's math SDPA on CUDA (no reduced-precision kernel)."""
        import contextlib
        if self.device.type != "cuda":
            return contextlib.nullcontext()
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel([SDPBackend.MATH])

    def _f64_sinusoid(self):
        outer = self

        class Patch:
            def __enter__(self):
                self.saved = outer.backbone.timestep_embedding
                outer.backbone.timestep_embedding = lambda t, dim: sinusoid_f64(t, dim).float()

            def __exit__(self, *exc):
                outer.backbone.timestep_embedding = self.saved
        return Patch()

    def seq(self, h, w, length):
        return self.build_seqinfo(self.torch.tensor([[h, w]]), self.torch.tensor([length])).to(self.device)

    def steps(self, latents, rows, sigma, skip):
        """{step: float32 output} in run order, each step on the previous f32 outputs."""
        torch, m = self.torch, self.model
        c, h, w = latents.shape
        n, length = h * w, rows.shape[0]
        seq = self.seq(h, w, length)
        out = {}
        with torch.no_grad(), self.exact():
            with self._f64_sinusoid():
                mod, head = m.conditioning(torch.tensor([sigma], dtype=torch.float32, device=self.device))
            out["time"] = torch.cat((mod[0], head[0]), 0)
            img = latents.to(self.device).flatten(1).T.contiguous()  # [N, C], token n = y * w + x
            out["video_embed"] = m.video_embedder(img)
            x = m.text_embedder.proj(rows.to(self.device, torch.float32))
            out["text_embed"] = x
            for j, block in enumerate(m.text_embedder.blocks):
                x = block(x, seq, m.rope.bands)
                out[f"text.{j}"] = x
            x = torch.cat((out["video_embed"], x), 0)  # one sample: [image ; text]
            ctx = self.BlockCtx(seq, out["time"][None, :6], m.rope.bands, m.residual_scale)
            for i, layer in enumerate(m.layers):
                if i in skip:
                    continue
                x = layer(x, ctx)
                out[f"block.{i}"] = x
            v = m.head(x, out["time"][None, 6:], seq)  # [N, C]
            out["head"] = v.T.reshape(c, h, w)
        return {k: t.float().cpu().contiguous() for k, t in out.items()}

    def whole(self, latents, rows, sigma, skip):
        torch = self.torch
        c, h, w = latents.shape
        forward = self.model.bind_forward(tuple(skip))
        with torch.no_grad(), self.exact(), self._f64_sinusoid():
            v = forward(latents.to(self.device).flatten(1).T.contiguous(), rows.to(self.device, torch.float32),
                        torch.tensor([sigma], dtype=torch.float32, device=self.device),
                        self.seq(h, w, rows.shape[0]))
        return v.T.reshape(c, h, w).float().cpu()


class MlxRef:
    """moss-image-mlx's MOSSImageTransformer: its default bf16 path (stored dtype), or float32."""

    def __init__(self, dit, folder, dtype=None):
        import mlx.core as mx
        import numpy as np
        import torch
        self.mx, self.np, self.torch = mx, np, torch
        self.model = dit.load_transformer(folder, dtype=dtype)
        self.dtype = self.model.video_embedder.weight.dtype

    def to_mx(self, t):
        """A torch tensor -> an MLX array of the model dtype (bf16 values cross exactly as float32)."""
        t = t.detach().cpu().float()
        if self.dtype == self.mx.bfloat16:
            t = t.to(self.torch.bfloat16).float()  # round-to-nearest-even, as torch rounds
        return self.mx.array(t.numpy()).astype(self.dtype)

    def to_torch(self, a):
        out = self.torch.from_numpy(self.np.array(a.astype(self.mx.float32)))
        return out.to(self.torch.bfloat16) if self.dtype == self.mx.bfloat16 else out

    def timestep(self, sigma):
        np = self.np
        return float(np.float32(sigma) * np.float32(TIME_SCALE))  # the pipeline's t = fp32(sigma * 1000)

    def step(self, name, inputs, sigma, h, w, length):
        """One step alone. inputs: torch tensors as the case defines the step's input."""
        mx, m = self.mx, self.model
        n = h * w
        if name == "time":
            mod, head = m.modulation(self.timestep(sigma))
            out = mx.concatenate([mod, head], axis=1)[0]
        elif name == "video_embed":
            latents = inputs["latents"]
            out = m.video_embedder(self.to_mx(latents.flatten(1).T.contiguous()))
        elif name == "text_embed":
            out = m.text_embedder.proj(self.to_mx(inputs["rows"]))
        elif name.startswith("text."):
            sin, cos = m.rope(h, w, length, self.dtype)
            block = m.text_embedder.blocks[int(name.split(".")[1])]
            out = block(self.to_mx(inputs["x"])[None], (sin[:, n:], cos[:, n:]))[0]
        elif name.startswith("block."):
            rope = m.rope(h, w, length, self.dtype)
            layer = m.layers[int(name.split(".")[1])]
            out = layer(self.to_mx(inputs["x"])[None], rope, self.to_mx(inputs["time"][:6])[None])[0]
        elif name == "head":
            x = self.to_mx(inputs["x"])[None, :n]
            head = self.to_mx(inputs["time"][6:])[None]  # (1, 2, D): shift, scale
            y = m.final_norm_video(x)
            y = y * (1 + head[:, 1:2]) + head[:, 0:1]
            out = m.final_linear_video(y)[0].T.reshape(-1, h, w)
        else:
            raise ValueError(name)
        return self.to_torch(out)

    def fp32_attention(self):
        """A context in which MLX's scaled_dot_product_attention keeps scores and softmax in fp32 and
        rounds its output once (as the official SDPA); printed comparisons only, never written."""
        mx = self.mx

        def sdpa(q, k, v, scale, **kw):
            if kw.get("mask") is not None:
                raise ValueError("no mask expected")
            f = mx.float32
            s = (q.astype(f) @ k.astype(f).swapaxes(-1, -2)) * scale
            return (mx.softmax(s, axis=-1) @ v.astype(f)).astype(q.dtype)

        class Patch:
            def __enter__(self):
                self.saved = mx.fast.scaled_dot_product_attention
                mx.fast.scaled_dot_product_attention = sdpa

            def __exit__(self, *exc):
                mx.fast.scaled_dot_product_attention = self.saved
        return Patch()

    def whole(self, latents, rows, sigma, skip):
        c, h, w = latents.shape
        out = self.model(self.mx.array(latents.float().numpy())[None], self.timestep(sigma),
                         self.to_mx(rows)[None], list(skip))
        return self.to_torch(out)[0]


def ports_tolerance(num_layers):
    """PORTS_TOL, grown as sqrt(blocks / PORTS_DEPTH) past PORTS_DEPTH: each block adds the two ports'
    independent float32 rounding (different summation orders), which adds up like a random walk. The 42
    released blocks get 2.9e-5, still four orders below what a wrong op gives (references.md's controls)."""
    return PORTS_TOL * max(1.0, (num_layers / PORTS_DEPTH) ** 0.5)


def step_names(num_layers, skip):
    return (["time", "video_embed", "text_embed"] + [f"text.{j}" for j in range(TEXT_BLOCKS)]
            + [f"block.{i}" for i in range(num_layers) if i not in skip] + ["head"])


def step_inputs(name, names, outputs, latents, rows):
    """The case's input of step `name`, taken from `outputs` (f32 or bf16 outputs by step name)."""
    import torch
    i = names.index(name)
    prev = names[i - 1] if i else None
    if name == "video_embed":
        return {"latents": latents}
    if name == "text_embed":
        return {"rows": rows}
    if name.startswith("text."):
        return {"x": outputs[prev]}
    if name.startswith("block."):
        x = outputs[prev] if prev.startswith("block.") else torch.cat((outputs["video_embed"], outputs[prev]), 0)
        return {"x": x, "time": outputs["time"]}
    if name == "head":
        return {"x": outputs[prev], "time": outputs["time"]}
    return {}


def run_case(args):
    need("torch", "numpy", "safetensors", "mlx", "moss_image_mlx", "kohakumoss")
    import mlx.core as mx
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from case_writer import CaseWriter

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit(f"{TOOL}: --device cuda but torch sees no CUDA device")
    folder = pathlib.Path(args.model)
    config = json.loads((folder / "config.json").read_text())
    if config.get("_class_name") != "MOSSImageTransformer":
        sys.exit(f"{TOOL}: {folder}/config.json is not a MOSSImageTransformer")
    c = {k: config[k] for k in TINY}
    head_dim = c["dim"] // c["num_heads"]
    skip_layer = 22 if c["num_layers"] == 42 else c["num_layers"] // 2
    ports_tol = ports_tolerance(c["num_layers"])

    dit = mlx_dit()
    f32 = Kohaku(folder, args.device)
    bf = MlxRef(dit, folder)
    mlx32 = MlxRef(dit, folder, dtype=mx.float32)
    if args.products == "torch":
        from mlx_torch_products import route_linear_products
        routed = route_linear_products(mlx32.model, (bf.model, mlx32.model))
        print(f"{TOOL}: the products of {routed} MLX linears through torch's float32 CPU matmul (--products torch)")

    g = torch.Generator().manual_seed(args.seed + 1)
    latents = torch.randn((c["latent_channels"], HEIGHT, WIDTH), generator=g)
    if args.sigma is None:  # the training grid linspace(1, 0.001, 1000) in fp32 (references.md, the sampler)
        sigma = float(torch.linspace(1.0, 0.001, 1000, dtype=torch.float32)[GRID_INDEX])
    else:
        sigma = float(torch.tensor(args.sigma, dtype=torch.float32))
    timestep = float(torch.tensor(sigma, dtype=torch.float32) * TIME_SCALE)

    reference = {"torch": torch.__version__, "kohakumoss": version("kohakumoss"), "mlx": version("mlx"),
                 "moss-image-mlx": version("moss-image-mlx")}
    case = CaseWriter("moss_image.transformer", reference)
    samples = []
    ok = True
    print(f"{TOOL}: torch {torch.__version__}, kohakumoss {reference['kohakumoss']} ({args.device}), mlx "
          f"{reference['mlx']} ({mx.default_device()}), moss-image-mlx {reference['moss-image-mlx']}; "
          f"latents [{c['latent_channels']}, {HEIGHT}, {WIDTH}], sigma {sigma!r} (t = {timestep!r})")
    for k, (length, skips) in enumerate(SAMPLES):
        skip = (skip_layer,) if skips else ()
        rows = (2.0 * torch.randn((length, c["text_dim"]), generator=g)).to(torch.bfloat16)
        names = step_names(c["num_layers"], skip)
        out32 = f32.steps(latents, rows, sigma, skip)
        assert list(out32) == names, (list(out32), names)
        # each step of the bf16 reference alone, on bf16(its f32 input)
        out16 = {n: bf.step(n, step_inputs(n, names, out32, latents, rows), sigma, HEIGHT, WIDTH, length)
                 for n in names}
        # the same steps chained on their own bf16 outputs, and the bf16 whole forward
        chained = {}
        for n in names:
            chained[n] = bf.step(n, step_inputs(n, names, chained, latents, rows), sigma, HEIGHT, WIDTH, length)
        whole16 = bf.whole(latents, rows, sigma, skip)
        with bf.fp32_attention():  # printed only: how much MLX's bf16-staged CPU attention adds
            alt16 = {n: bf.step(n, step_inputs(n, names, out32, latents, rows), sigma, HEIGHT, WIDTH, length)
                     for n in names}

        # self-check
        v32 = out32["head"]
        d_chain = distance(v32, f32.whole(latents, rows, sigma, skip))
        d_ports = distance(v32, mlx32.whole(latents, rows, sigma, skip).float())
        d_bf = distance(chained["head"].float(), whole16.float())
        d_whole = distance(whole16.float(), v32)
        good = (d_chain[0] <= CHAIN_TOL and d_ports[0] <= ports_tol and d_ports[1] <= ports_tol
                and d_bf[1] <= BF16_CHAIN_TOL
                and all(torch.isfinite(t.float()).all() for t in [*out16.values(), *out32.values()]))
        ok &= good
        print(f"\nsample s{k}: {length} prompt rows, skip {list(skip) or '-'}; |v| max {v32.abs().max().item():.3g}")
        print(f"  f32 steps chained vs kohakumoss whole f32      {d_chain[0]:9.2e} {d_chain[1]:9.2e}  "
              f"(worst/max, Frobenius; gate {CHAIN_TOL:g})")
        print(f"  f32 steps chained vs moss-image-mlx whole f32  {d_ports[0]:9.2e} {d_ports[1]:9.2e}  "
              f"(gate {ports_tol:.2g})")
        print(f"  bf16 steps chained vs bf16 whole               {d_bf[0]:9.2e} {d_bf[1]:9.2e}  "
              f"(gate {BF16_CHAIN_TOL:g} Frobenius){'' if good else '  FAIL'}")
        print(f"  bf16 whole vs f32 (printed)                    {d_whole[0]:9.2e} {d_whole[1]:9.2e}")
        print(f"  distances from f32.<step> (cosine error, worst row): bf16.<step>; bf16 rounding of f32.<step>; "
              f"the bf16 step with fp32-inside attention (printed only)")
        print(f"  {'step':<14} {'shape':<12} {'rms f32':>8} | {'bf16 step alone':^19} | {'bf16 rounding':^19} | "
              f"{'fp32-inside attn':^19}")
        p = f"s{k}."
        case.input(p + "latents", latents.clone())
        case.input(p + "rows", rows.contiguous())
        case.input(p + "sigma", torch.tensor([sigma], dtype=torch.float32))
        for n in names:
            a, b = out32[n], out16[n]
            pos = n == "head"
            cos, row = gate_measures(b, a, pos)
            rcos, rrow = gate_measures(a.to(torch.bfloat16), a, pos)
            acos, arow = gate_measures(alt16[n], a, pos)
            rms = a.double().square().mean().sqrt().item()
            print(f"  {p + n:<14} {str(list(a.shape)):<12} {rms:8.3g} | {cos:9.2e} {row:9.2e} | "
                  f"{rcos:9.2e} {rrow:9.2e} | {acos:9.2e} {arow:9.2e}")
            case.step(p + n, a.contiguous(), b.contiguous())
        case.whole(p + "bf16", whole16.contiguous())
        samples.append({"name": f"s{k}", "text_length": length, "skip_layers": list(skip)})
    if not ok:
        sys.exit(f"{TOOL}: self-check FAILED; nothing written")

    meta = dict(c, head_dim=head_dim, text_blocks=TEXT_BLOCKS, rope_axes=ROPE_AXES, rope_bands=head_dim // 8,
                eps=EPS, height=HEIGHT, width=WIDTH, sigma=sigma, timestep=timestep, samples=samples,
                device=args.device, seed=args.seed)
    meta["f32_reference"] = (
        f"kohakumoss {reference['kohakumoss']} MossBackbone in float32 on torch {torch.__version__} "
        f"({args.device}, TF32 off, its eager ops), called step by step; its fp32 timestep sinusoid replaced "
        "by the official float64 one; steps chained equal its whole forward; moss-image-mlx's float32 "
        f"forward agrees within {ports_tol:.2g}")
    meta["bf16_reference"] = (
        f"moss-image-mlx {reference['moss-image-mlx']} default bf16 path on mlx {reference['mlx']} "
        f"({mx.default_device()}): bf16 weights, every op rounded like torch eager (the official rounding "
        "points), each step alone on bf16(its f32 input); whole.s<k>.bf16 its whole forward")
    if args.products == "torch":  # the default's metadata unchanged, so the committed cases rerun the same
        meta["products"] = "torch"
        meta["bf16_reference"] += ("; every linear's product through torch's float32 CPU matmul (fp32 sums, "
                                   "one rounding to bf16, as MLX's CPU gemm; python/cases/mlx_torch_products.py)")
    meta["bf16_attention"] = (
        "MLX's CPU scaled_dot_product_attention on bf16: q * scale -> bf16, scores -> bf16, softmax (fp32 "
        "inside) -> bf16, probabilities @ v -> bf16; the official SDPA keeps scores and softmax in fp32")
    for key, value in meta.items():
        case.meta(key, value)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    case.write(str(out))
    print(f"\nwrote {out}: {len(case.steps)} steps, {os.path.getsize(out):,} bytes; self-check ok")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tiny", help="write a tiny random checkpoint in the official layout")
    t.add_argument("--out", required=True)
    t.add_argument("--seed", type=int, default=0)
    k = sub.add_parser("case", help="write the stepwise case for a checkpoint folder")
    k.add_argument("--model", required=True, help="a transformer folder (config.json + safetensors)")
    k.add_argument("--out", required=True)
    k.add_argument("--device", default="cpu", choices=("cpu", "cuda"), help="the float32 reference's device")
    k.add_argument("--seed", type=int, default=0)
    k.add_argument("--sigma", type=float, help="default: the training grid's 0.933 (fp32 0.93299997)")
    k.add_argument("--products", default="mlx", choices=("mlx", "torch"),
                   help="moss-image-mlx's linear products: MLX's CPU gemm, or torch's float32 CPU matmul "
                        "(same fp32 sums and rounding; fast at the released geometry: mlx_torch_products.py)")
    args = ap.parse_args()
    if args.cmd == "tiny":
        need("torch", "numpy", "safetensors")
        make_tiny(args.out, args.seed)
    else:
        run_case(args)


if __name__ == "__main__":
    main()
