"""The caller's CUDA stream, so the engine's GPU work is ordered after what the caller queued and the
caller's after the engine's (events, no host wait)."""


def caller_stream(stream, *tensors):
    """`stream` as given (a torch.cuda.Stream or a cudaStream_t as an int), else torch's current stream
    on the device of the first CUDA tensor among `tensors` (with no tensors given: on GPU 0, where
    torch has CUDA), else 0 (the legacy default stream)."""
    if stream is not None:
        return int(getattr(stream, "cuda_stream", stream))
    for t in tensors:
        if getattr(t, "is_cuda", False):
            import torch

            return torch.cuda.current_stream(t.device).cuda_stream
    if not tensors:
        try:
            import torch
        except ImportError:
            return 0
        if torch.cuda.is_available():
            return torch.cuda.current_stream(0).cuda_stream
    return 0
