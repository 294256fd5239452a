"""kohakumoss's torch MOSS-Image transformer (module names equal the official state-dict keys) loaded
from a checkpoint folder in bf16, and the two calls the bench times, made as the official pipeline
makes them (docs/perf/transformer/references.md, "The sampler"): one forward of one sample, and a
guidance step = two forwards, the negative one skipping a block, combined in fp32
(kohakumoss.diffusion.sampling.sample._two_pass; moss-image-mlx does the same; that module is not
imported because it pulls kohakumoss's data stack).
"""
import importlib.metadata

import torch
import torch.nn.functional as F

GUIDANCE = 3.0  # the pipeline's default; the work does not depend on it
SIGMA = 0.933   # a mid-schedule sigma; neither does the work


def version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def load(folder, device):
    """The backbone with every parameter bf16 (as the official from_pretrained(torch_dtype=bf16);
    no fp32 copies of the time path) and kohakumoss's eager torch ops pinned (no Triton or TileLang
    kernel of its own: "torch eager" means torch's kernels, SDPA for the attention)."""
    from kohakumoss.model.io.load import load_backbone
    from kohakumoss.model.opset import FUSED, PRIMITIVES

    pinned = {name: "eager" for name in PRIMITIVES + FUSED}
    model, report = load_backbone(folder, device=device, dtype=torch.bfloat16, keep_fp32=(), kernels=pinned)
    if not report.ok:
        raise SystemExit(f"torch_timer: kohakumoss could not load {folder}: missing {report.missing[:4]}, "
                         f"unexpected {report.unexpected[:4]}")
    model.requires_grad_(False)
    return model.eval()


def sdpa_one_sample(q, k, v, cu_seqlens, max_seqlen, scale):
    """kohakumoss's attention_varlen for a pass of one sample: torch SDPA over the whole [N, H, Dh]
    (what its eager op computes for one segment, without the host read of the segment bounds that
    breaks a torch.compile graph at every attention)."""
    if cu_seqlens.shape[0] != 2:
        raise ValueError(f"sdpa_one_sample: {cu_seqlens.shape[0] - 1} sequences, expected one sample a pass")
    o = F.scaled_dot_product_attention(*(t.transpose(0, 1).unsqueeze(0) for t in (q, k, v)), scale=scale)
    return o.squeeze(0).transpose(0, 1)


def use_attention(model, which):
    """The attention of every block: "sdpa" sdpa_one_sample (the official batch-1 call), "varlen"
    kohakumoss's eager op as bound."""
    if which == "sdpa":
        model.ops.attention_varlen = sdpa_one_sample


def geometry(model):
    cfg = model.cfg
    return dict(dim=cfg.dim, layers=cfg.depth, heads=cfg.heads, ffn_dim=cfg.ffn_dim, text_dim=cfg.text_dim,
                latent_channels=cfg.latent_channels, freq_dim=cfg.freq_dim, text_blocks=cfg.text_blocks)


def skip_layer(layers):
    """The negative branch's skipped block: 22 of the released 42 (the pipeline's default), else the middle."""
    return 22 if layers == 42 else layers // 2


class Inputs:
    """One picture size's inputs on `device`: fp32 latents packed [h*w, C] (token n = y*w + x), bf16
    prompt rows for the cond and uncond branches, sigma, and each branch's packed layout."""

    def __init__(self, model, h, w, text, uncond_text, device, seed):
        from kohakumoss.types.seqinfo import build_seqinfo

        cfg = model.cfg
        g = torch.Generator().manual_seed(seed)
        self.latents = torch.randn((h * w, cfg.latent_channels), generator=g).to(device)
        self.rows = (2.0 * torch.randn((text, cfg.text_dim), generator=g)).to(torch.bfloat16).to(device)
        self.neg_rows = (2.0 * torch.randn((uncond_text, cfg.text_dim), generator=g)).to(torch.bfloat16).to(device)
        self.sigma = torch.tensor([SIGMA], dtype=torch.float32, device=device)
        hw = torch.tensor([[h, w]])
        self.seq = build_seqinfo(hw, torch.tensor([text])).to(device)
        self.neg_seq = build_seqinfo(hw, torch.tensor([uncond_text])).to(device)


class Calls:
    """The forward and the guidance step through `cond` / `uncond` forwards (plain or compiled)."""

    def __init__(self, cond, uncond, x):
        self.cond, self.uncond, self.x = cond, uncond, x

    def forward(self):
        x = self.x
        return self.cond(x.latents, x.rows, x.sigma, x.seq).float()

    def guidance(self):
        x = self.x
        v = self.cond(x.latents, x.rows, x.sigma, x.seq).float()
        u = self.uncond(x.latents, x.neg_rows, x.sigma, x.neg_seq).float()
        return u + GUIDANCE * (v - u)


def forwards(model, skip):
    """(cond, uncond) forwards, each with its block plan resolved once as kohakumoss binds them."""
    return model.bind_forward(), model.bind_forward((skip,))
