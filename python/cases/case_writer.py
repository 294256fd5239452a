"""The one case format of TensorFold's stepwise reference gate (src/check/gate/case.h reads it).

A case is a safetensors file. Its metadata holds
  kind       "tensorfold.case"
  component  the component it is for: "moss_image.encoder", "flux2_vae", ...
  steps      a JSON array of step names, in run order
  reference  a JSON object of the reference libraries' versions ({"torch": "2.15.0", ...})
  + the component's own keys (strings; lists and objects are written as JSON)
and its tensors
  in.<name>     the run's inputs
  f32.<step>    the float32 (float64 for the VAE) reference's output of each step; a step's input is
                the previous step's f32 output or a named input, as the component defines
  bf16.<step>   torch bf16's output of the step alone on bf16(its f32 input); optional
  whole.<name>  whole-run outputs (printed distances, the VAE's decoded picture)

    case = CaseWriter("flux2_vae", {"torch": torch.__version__}, height=32)
    case.input("image", pic)
    case.step("enc.conv_in", f64_out, bf16_out)
    case.whole("picture", decoded)
    case.write("case.safetensors")
"""
import json

import torch
from safetensors.torch import save_file

KIND = "tensorfold.case"
RESERVED = ("kind", "component", "steps", "reference")


def _meta_text(key, value):
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float, list, dict)):
        return json.dumps(value, ensure_ascii=False)
    raise TypeError(f"case metadata {key!r}: {type(value).__name__} is not a string, number, list or dict")


class CaseWriter:
    """Collects a case's inputs, steps (in order) and whole-run outputs, then writes it once."""

    def __init__(self, component, reference, **metadata):
        if not component:
            raise ValueError("a case needs its component's name")
        if not reference or not all(isinstance(v, str) for v in reference.values()):
            raise ValueError(f"reference must map each library to its version string, got {reference!r}")
        self.component = component
        self.reference = dict(reference)
        self.metadata = {}
        self.steps = []
        self.tensors = {}
        for key, value in metadata.items():
            self.meta(key, value)

    def meta(self, key, value):
        if key in RESERVED:
            raise ValueError(f"case metadata {key!r} is the writer's own")
        if key in self.metadata:
            raise ValueError(f"case metadata {key!r} given twice")
        self.metadata[key] = _meta_text(key, value)

    def _check(self, name, tensor, dtypes):
        if name in self.tensors:
            raise ValueError(f"case tensor {name!r} given twice")
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"case tensor {name!r} is a {type(tensor).__name__}, not a torch tensor")
        if tensor.device.type != "cpu":
            raise ValueError(f"case tensor {name!r} is on {tensor.device}; move it to the CPU")
        if not tensor.is_contiguous():
            raise ValueError(f"case tensor {name!r} is not contiguous; pass tensor.contiguous()")
        if dtypes and tensor.dtype not in dtypes:
            raise ValueError(f"case tensor {name!r} is {tensor.dtype}, expected one of {dtypes}")

    def _add(self, name, tensor, dtypes):
        self._check(name, tensor, dtypes)
        self.tensors[name] = tensor

    def input(self, name, tensor):
        self._add("in." + name, tensor, None)

    def step(self, name, f32, bf16=None):
        """One step: the reference's output, and torch bf16's output of the step alone (or None)."""
        if name in self.steps:
            raise ValueError(f"case step {name!r} given twice")
        self._check("f32." + name, f32, (torch.float32, torch.float64))
        if bf16 is not None:
            self._check("bf16." + name, bf16, (torch.bfloat16,))
            self.tensors["bf16." + name] = bf16
        self.tensors["f32." + name] = f32
        self.steps.append(name)

    def whole(self, name, tensor):
        self._add("whole." + name, tensor, None)

    def write(self, path):
        if not self.steps:
            raise ValueError("a case needs at least one step")
        meta = {"kind": KIND, "component": self.component, "steps": json.dumps(self.steps),
                "reference": json.dumps(self.reference, sort_keys=True)}
        meta.update(self.metadata)
        save_file(self.tensors, path, metadata=meta)
