"""tensorfold.VAE: the FLUX.2 VAE on the engine (pictures -> latents and Idol's feature2, latents -> pictures)."""
from dataclasses import dataclass
from typing import Any, Optional

from . import _core, _output
from ._stream import caller_stream


@dataclass
class VaeEncoding:
    """latents F32 [B, Cz, H/8, W/8] (the posterior mean, or its sample with the given noise) and
    Idol's feature2 F32 [B, 5 + H*W/256, 4*Cz] (five zero rows, then the normalised tokens)."""
    latents: Any
    feature2: Any


def _is_pil(x):
    return hasattr(x, "tobytes") and hasattr(x, "convert") and hasattr(x, "size")


def _pil_pictures(images, multiple, output):
    pics = []
    for im in images:
        rgb = im.convert("RGB")
        pics.append((rgb.tobytes(), rgb.size[0], rgb.size[1]))
    return _core.pictures_to_input(pics, multiple, output)


class VAE:
    """``from_pretrained(path, device="cpu"|"cuda")``: a pipeline folder (model_index.json, vae/) or
    the VAE's own folder. Inputs are tensors (torch, numpy, anything with DLPack) of the exact dtype,
    C-contiguous, in host memory or, with device="cuda", in GPU 0's memory (read in place); outputs own
    their memory and lie where the input did. GPU work is ordered on ``stream`` (a torch.cuda.Stream or
    a cudaStream_t as an int; by default torch's current stream), so no synchronisation is needed."""

    def __init__(self, engine, output):
        self._engine = engine
        self._output = output
        self.config = engine.config

    @classmethod
    def from_pretrained(cls, path, device: str = "cpu", output: Optional[str] = None):
        return cls(_core.Vae(str(path), device), _output.choose(output))

    def _input(self, images):
        if _is_pil(images):
            images = [images]
        if isinstance(images, (list, tuple)):
            if not images or not all(_is_pil(im) for im in images):
                raise ValueError("images: expected a float32 tensor [B, 3, H, W] or PIL images")
            return _pil_pictures(images, self.config["picture_multiple"], "dlpack")
        return images

    def encode(self, images, noise=None, max_memory: float = 0.0, stream=None) -> VaeEncoding:
        """images: F32 [B, 3, H, W] in [-1, 1], or PIL images (read as the programs read a PNG).
        noise: F32 [B, Cz, H/8, W/8] for the posterior sample, or None for its mean."""
        latents, feature2 = self._engine.encode(self._input(images), noise, max_memory=max_memory, output=self._output,
                                                stream=caller_stream(stream, images, noise))
        return VaeEncoding(latents, feature2)

    def moments(self, images, max_memory: float = 0.0, stream=None):
        """F32 [B, 2*Cz, H/8, W/8]: the posterior's mean and log-variance (diffusers' latent_dist parameters)."""
        return self._engine.moments(self._input(images), max_memory=max_memory, output=self._output,
                                    stream=caller_stream(stream, images))

    def decode(self, latents, max_memory: float = 0.0, stream=None):
        """latents F32 [B, Cz, h, w] -> pictures F32 [B, 3, 8h, 8w], nominally in [-1, 1]; GPU latents are
        decoded in place into GPU pictures (not scanned for non-finite values, as torch would not)."""
        return self._engine.decode(latents, max_memory=max_memory, output=self._output,
                                   stream=caller_stream(stream, latents))

    def __repr__(self):
        return f"VAE({self.config['summary']})"


def to_pil(pictures):
    """Pictures F32 [B, 3, H, W] or [3, H, W] in [-1, 1] -> PIL images (a list for a batch), rounded
    as the programs write a PNG."""
    from PIL import Image

    def one(p):
        if getattr(p, "is_cuda", False):
            p = p.cpu()
        data, w, h = _core.output_to_picture(p)
        return Image.frombytes("RGB", (w, h), data)

    ndim = len(pictures.shape)
    if ndim == 3:
        return one(pictures)
    if ndim != 4:
        raise ValueError(f"pictures: expected [B, 3, H, W] or [3, H, W], got shape {tuple(pictures.shape)}")
    return [one(pictures[b]) for b in range(pictures.shape[0])]
