"""CUDA-event timing of a torch callable, shared by the torch sides of the benches
(bench/encoder_vs_torch/torch_timer.py, bench/vae_vs_torch_torch.py,
bench/transformer_vs_torch/torch_timer.py), and its wall-clock stand-in on the CPU."""
import time

import torch


def cuda_event_times_ms(fn, reps, warmup):
    """Runs fn warmup times untimed, then reps times, each bracketed by CUDA events and waited for;
    returns the reps timings in milliseconds."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        runs.append(start.elapsed_time(end))
    return runs


def times_ms(fn, reps, warmup, device):
    """cuda_event_times_ms on a CUDA device; on the CPU (where a call ends when it returns) the wall
    clock around each call."""
    if torch.device(device).type == "cuda":
        return cuda_event_times_ms(fn, reps, warmup)
    for _ in range(warmup):
        fn()
    runs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - t0) * 1e3)
    return runs
