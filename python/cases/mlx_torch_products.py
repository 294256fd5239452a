"""moss_transformer_case.py --products torch: every mlx.nn.Linear of moss-image-mlx's models computes its
product through torch's float32 CPU matmul (all cores) instead of MLX's CPU gemm.

Why: MLX's Linux CPU wheel multiplies float32 through the reference BLAS it bundles and bfloat16 through a
single-threaded SIMD gemm: a released-geometry forward (5B weights) takes minutes, and the case needs about
ten. What stays the same: MLX's bf16 gemm accumulates in fp32 and rounds its
result (bias added) to bf16 once; so does this route (x and W as fp32, which holds bf16 values exactly,
x W^T + b in fp32, one rounding to the output dtype). Only the summation order differs, as between any two
gemms: float32 rounding, far below bf16's. Every other op (norms, RoPE, SiTU, attention, the residual
stream) is still MLX's own.

Weights come from the float32 model (its arrays shared with torch, no copy), so the bf16 model's products
use the same values its own bf16 weights hold exactly.
"""
import mlx.core as mx
import mlx.nn as nn
import numpy as np
import torch


def route_linear_products(fp32_model, models):
    """Installs the torch route for every nn.Linear of `models` (moss-image-mlx MOSSImageTransformer
    instances of one checkpoint); `fp32_model` (one of them, loaded in float32) gives the weights.
    For the rest of the process."""
    twins = dict(fp32_model.named_modules())
    table = {}
    for model in models:
        for name, module in model.named_modules():
            if not isinstance(module, nn.Linear):
                continue
            src = twins.get(name)
            if not isinstance(src, nn.Linear) or src.weight.dtype != mx.float32:
                raise ValueError(f"route_linear_products: {name} has no float32 twin in the float32 model")
            mx.eval(src.parameters())
            w = torch.from_numpy(np.asarray(src.weight))
            b = torch.from_numpy(np.asarray(src.bias)) if "bias" in src else None
            table[id(module)] = (module, w, b)  # the module kept, so its id is not reused
    mlx_call = nn.Linear.__call__

    def call(self, x):
        entry = table.get(id(self))
        if entry is None:
            return mlx_call(self, x)
        _, w, b = entry
        out = (mx.zeros((), x.dtype) + mx.zeros((), self.weight.dtype)).dtype  # MLX's promotion of the two
        y = torch.nn.functional.linear(torch.from_numpy(np.asarray(x.astype(mx.float32))), w, b)
        return mx.array(y.numpy()).astype(out)

    nn.Linear.__call__ = call
    return len(table)
