"""Expected values for the MOSS-Image sampler's C++ tests (tests/moss_image/test_sampler_*.cpp).

Writes, into tests/data/sampler/:
  randn.safetensors     torch.randn(shape, generator=torch.Generator().manual_seed(seed)), float32,
                        for each seed and size: tensors "randn.s<seed>.n<numel>" (shape as drawn);
                        for the [1, 128, 64, 64] draw only its FNV-1a 64 hash (metadata
                        "hash.s<seed>") and its first and last 16 values ("big.s<seed>.head/.tail")
  schedule.safetensors  kohakumoss's moss_sigmas(steps, shift) (the official schedule; the MLX
                        port's sigmas_for is checked to agree bit for bit): "sigmas.<k>" for the k-th
                        pair of metadata "pairs" (JSON [[steps, shift], ...], shift as Python repr),
                        "timesteps.<k>" (fp32 sigma * 1000, as the official scheduler) where
                        metadata "timesteps" lists k, "grid.<k>" the shifted sigmas before snapping
                        for metadata "grids"[k], and "linspace.<k>" = torch.linspace(*linspaces[k])

Run in the reference venv on x86-64 with torch's AVX2 or AVX512 CPU capability (the default there);
the test data are committed, CI never runs this.
    python python/cases/sampler_data.py tests/data/sampler
"""
import glob
import importlib.util
import json
import sys
import types

import numpy as np
import torch
from safetensors.torch import save_file

SEEDS = [0, 1, 42, 2**32 + 5, 0xDEADBEEFCAFEF00D]
SIZES = [(1,), (2,), (5,), (15,), (16,), (17,), (31,), (32,), (33,), (1000,), (1, 128, 4, 3)]
BIG = (1, 128, 64, 64)
SMALL_STEPS = [1, 2, 3, 4, 5, 7, 8, 10, 16, 20, 25, 28, 30, 50, 64, 100, 250]
SHIFTS = [0.001, 0.5, 1.0, 1.5, 3.0, 3.16, 5.0, 7.5, 10.0, 1000.0]
BIG_STEPS = [999, 1000, 1001, 2000]
# pairs where a shifted sigma sits exactly midway between two training sigmas (the tie goes to the
# lower), and where the shift evaluated in double instead of fp32 snaps elsewhere
EDGE_PAIRS = [(38, 6.0), (136, 1.5), (308, 3.16), (112, 6.0), (172, 7.5), (256, 3.0)]
GRIDS = [(50, 5.0), (112, 6.0), (256, 3.0), (7, 0.5), (1000, 1.0), (1, 3.0)]
LINSPACES = [(1.0, 0.001, 1000), (1.0, 5.0 / 1004.0, 50), (1.0, 0.25, 7), (0.5, -3.0, 33), (1.0, 0.001, 1)]


def load_references():
    """kohakumoss's schedule.py and the MLX port's scheduler.py, loaded by path (their packages'
    __init__ pull in data and model dependencies the schedule does not need)."""
    site = glob.glob(sys.prefix + "/lib/python3*/site-packages")[0]

    def load(name, path):
        spec = importlib.util.spec_from_file_location(name, path)
        m = importlib.util.module_from_spec(spec)
        sys.modules[name] = m
        spec.loader.exec_module(m)
        return m

    for p in ["kohakumoss", "kohakumoss.diffusion", "kohakumoss.diffusion.timestep", "kohakumoss.diffusion.sampling"]:
        sys.modules.setdefault(p, types.ModuleType(p))
    load("kohakumoss.diffusion.timestep.shift", site + "/kohakumoss/diffusion/timestep/shift.py")
    kohaku = load("kohakumoss.diffusion.sampling.schedule", site + "/kohakumoss/diffusion/sampling/schedule.py")
    mlx = load("moss_mlx_scheduler", site + "/moss_image_mlx/scheduler.py")
    return kohaku.moss_sigmas, mlx.sigmas_for


def fnv1a64(data: bytes) -> int:
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def randn(shape, seed):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float32)


def noise_data():
    cap = torch.backends.cpu.get_cpu_capability()
    assert cap in ("AVX2", "AVX512"), f"torch's CPU capability is {cap}; the C++ reproduces AVX2/AVX512"
    tensors, meta = {}, {"torch": torch.__version__, "cpu_capability": cap}
    for seed in SEEDS:
        for shape in SIZES:
            t = randn(shape, seed)
            tensors[f"randn.s{seed}.n{t.numel()}"] = t
        big = randn(BIG, seed).contiguous()
        meta[f"hash.s{seed}"] = f"{fnv1a64(big.numpy().tobytes()):016x}"
        tensors[f"big.s{seed}.head"] = big.flatten()[:16].clone()
        tensors[f"big.s{seed}.tail"] = big.flatten()[-16:].clone()
    assert torch.equal(randn((1000,), 2**32 + 5), randn((1000,), 5)), "torch uses the seed's low 32 bits"
    return tensors, meta


def schedule_data():
    moss_sigmas, sigmas_for = load_references()
    pairs = [(n, s) for n in SMALL_STEPS for s in SHIFTS] + [(n, s) for n in BIG_STEPS for s in (1.0, 5.0)] + EDGE_PAIRS
    tensors, with_timesteps = {}, []
    for k, (steps, shift) in enumerate(pairs):
        sig = moss_sigmas(steps, shift)
        assert np.array_equal(sig.numpy().view(np.uint32), sigmas_for(steps, shift).view(np.uint32)), (steps, shift)
        tensors[f"sigmas.{k}"] = sig
        if shift in (1.0, 5.0):
            tensors[f"timesteps.{k}"] = sig[:-1] * 1000  # the official scheduler's timesteps
            with_timesteps.append(k)
    grid = sys.modules["kohakumoss.diffusion.sampling.schedule"]._grid
    for k, (n, s) in enumerate(GRIDS):
        tensors[f"grid.{k}"] = grid(n, s, 1000)  # before snapping
    for k, (a, b, n) in enumerate(LINSPACES):
        tensors[f"linspace.{k}"] = torch.linspace(a, b, n, dtype=torch.float32)
    meta = {
        "torch": torch.__version__,
        "pairs": json.dumps([[n, repr(s)] for n, s in pairs]),
        "timesteps": json.dumps(with_timesteps),
        "grids": json.dumps([[n, repr(s)] for n, s in GRIDS]),
        "linspaces": json.dumps([[repr(a), repr(b), n] for a, b, n in LINSPACES]),
    }
    return tensors, meta


def main(out_dir):
    tensors, meta = noise_data()
    save_file(tensors, f"{out_dir}/randn.safetensors", metadata=meta)
    tensors, meta = schedule_data()
    save_file(tensors, f"{out_dir}/schedule.safetensors", metadata=meta)


if __name__ == "__main__":
    main(sys.argv[1])
