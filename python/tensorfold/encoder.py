"""tensorfold.PromptEncoder: MOSS-Image's prompt encoder (Qwen3.5's text model) on the engine."""
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

from . import _core, _output
from ._stream import caller_stream


@dataclass
class Encoding:
    """Final-norm rows (BF16 [n, hidden]) and token ids (I32 [n]) per prompt; a list of each when a
    list of prompts was given. ``negative_*`` are None without a negative prompt."""
    rows: Any
    ids: Any
    negative_rows: Any = None
    negative_ids: Any = None


class PromptEncoder:
    """``from_pretrained(path, device="cpu"|"cuda")``: a pipeline folder (model_index.json with
    text_encoder/ and tokenizer/) or a text encoder folder with its tokenizer beside it."""

    def __init__(self, engine, output):
        self._engine = engine
        self._output = output

    @classmethod
    def from_pretrained(cls, path, device: str = "cpu", output: Optional[str] = None):
        """``output``: "torch", "numpy" (bf16 rows as uint16 bit patterns) or "dlpack"; default torch
        when importable. A missing or malformed folder raises ValueError."""
        return cls(_core.PromptEncoder(str(path), device), _output.choose(output))

    def encode(self, prompts: Union[str, Sequence[str]], negative: Union[None, str, Sequence[str]] = None,
               max_memory: float = 0.0, rows_device: str = "cpu", stream=None) -> Encoding:
        """Encodes the prompts (and negatives) in one pass over the weights, in the pipeline's chat
        format; each prompt's rows are the bytes ``tf-moss-image encode`` writes for it. A run whose
        memory estimate exceeds the device's memory (or ``max_memory`` GiB) raises MemoryError.
        ``rows_device="cuda"`` (an encoder loaded with device="cuda") leaves the rows on the GPU, ready
        as a pipeline's ``prompt_embeds``, ordered before the later work of ``stream`` (default torch's
        current stream)."""
        single = isinstance(prompts, str)
        pos = [prompts] if single else list(prompts)
        if negative is None:
            neg = []
        elif isinstance(negative, str) != single:
            raise ValueError("negative: give a string with a string prompt, a list with a list of prompts")
        else:
            neg = [negative] if single else list(negative)
            if len(neg) != len(pos):
                raise ValueError(f"negative: {len(neg)} negative prompts for {len(pos)} prompts")
        for name, group in (("prompts", pos), ("negative", neg)):
            for p in group:
                if not isinstance(p, str):
                    raise ValueError(f"{name}: expected strings, got {type(p).__name__}")
        out = self._engine.encode(pos + neg, max_memory=max_memory, output=self._output, rows_device=rows_device,
                                  stream=caller_stream(stream) if rows_device == "cuda" else 0)
        ids = [i for i, _ in out]
        rows = [r for _, r in out]
        n = len(pos)
        if single:
            return Encoding(rows[0], ids[0], rows[1] if neg else None, ids[1] if neg else None)
        return Encoding(rows[:n], ids[:n], rows[n:] if neg else None, ids[n:] if neg else None)

    def tokenize(self, prompt: str, chat: bool = True):
        """Token ids (a list) of a prompt in the chat format, or as raw text."""
        return self._engine.tokenize(prompt, chat)

    @property
    def hidden(self) -> int:
        return self._engine.hidden

    def __repr__(self):
        return f"PromptEncoder({self._engine.summary})"
