"""tensorfold.MossImagePipeline: prompt -> picture, the whole MOSS-Image pipeline on the engine."""
from typing import Callable, Optional

from . import _core, _output


class MossImagePipeline:
    """``from_pretrained(path, device="cpu"|"cuda")``: the published pipeline folder (model_index.json,
    scheduler/, text_encoder/, tokenizer/, transformer/, vae/). Components load at the first call and
    stay loaded where the device holds them, so later pictures skip the loads."""

    def __init__(self, engine, output):
        self._engine = engine
        self._output = output

    @classmethod
    def from_pretrained(cls, path, device: str = "cpu", max_memory: float = 0.0, output: Optional[str] = None):
        """A missing component folder or mismatched configs raise ValueError; ``max_memory`` (GiB) caps
        what a run may use (MemoryError past it)."""
        return cls(_core.MossImagePipeline(str(path), device, max_memory), _output.choose(output))

    def __call__(self, prompt: str, negative_prompt: str = "", height: int = 1024, width: int = 1024,
                 num_inference_steps: int = 50, guidance_scale: float = 3.0, shift: Optional[float] = None,
                 seed: int = 0, callback_on_step_end: Optional[Callable] = None, output_type: str = "pil"):
        """The picture for ``seed`` (torch.Generator().manual_seed(seed)'s noise): a PIL image, or with
        ``output_type="np"``/``"pt"`` the 8-bit [H, W, 3] array. The same bytes as ``tf-moss-image
        generate``. ``callback_on_step_end(step, steps, latents)`` runs after each step; an exception
        it raises (and Ctrl-C) stops the run."""
        for name, v in (("prompt", prompt), ("negative_prompt", negative_prompt)):
            if not isinstance(v, str):
                raise ValueError(f"{name}: expected a string, got {type(v).__name__}")
        # torch.Generator().manual_seed's range; a negative seed is its two's complement, as torch reads it
        if isinstance(seed, bool) or not isinstance(seed, int) or not -(1 << 63) <= seed < (1 << 64):
            raise ValueError(f"seed: expected an integer from -2**63 to 2**64 - 1, got {seed!r}")
        seed &= (1 << 64) - 1
        if output_type not in ("pil", "np", "pt"):
            raise ValueError(f"output_type: expected pil, np or pt, got {output_type!r}")
        out = {"pil": "numpy", "np": "numpy", "pt": "torch"}[output_type]
        picture, self.latents = self._engine.generate(prompt, negative_prompt, width, height, num_inference_steps,
                                                      guidance_scale, shift, seed, callback_on_step_end, out)
        if output_type != "pil":
            return picture
        from PIL import Image

        return Image.fromarray(picture, "RGB")

    def __repr__(self):
        return f"MossImagePipeline({self._engine.summary})"
