"""Which framework outputs are handed over in: torch when importable, else numpy, else DLPack arrays."""
import importlib.util

FRAMEWORKS = ("torch", "numpy", "dlpack")


def choose(output):
    """``output`` as given ("torch", "numpy", "dlpack"), or the default for None."""
    if output is not None:
        if output not in FRAMEWORKS:
            raise ValueError(f"output: expected one of {FRAMEWORKS} or None, got {output!r}")
        return output
    for name in ("torch", "numpy"):
        if importlib.util.find_spec(name) is not None:
            return name
    return "dlpack"
