"""Shared by the tensorfold package's tests: the tiny pipeline, the built programs, safetensors I/O
(a few lines, so the tests need only numpy), and the optional reference libraries."""
import importlib.util
import json
import os
import struct
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TINY = Path(os.environ.get("TF_TINY_PIPELINE", HERE.parent / "data" / "tiny-pipeline"))
PICTURE = HERE.parent / "data" / "vae" / "picture-32x32.png"
HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_DIFFUSERS = HAVE_TORCH and importlib.util.find_spec("diffusers") is not None

needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (CI has no CPU torch index)")
needs_diffusers = pytest.mark.skipif(not HAVE_DIFFUSERS, reason="torch and diffusers are not installed")

_NP = {"F32": "<f4", "I32": "<i4", "BF16": "<u2"}


def program(name):
    """A built program's path from the environment ctest sets (TF_MOSS_IMAGE, TF_FLUX2_VAE)."""
    path = os.environ.get(name)
    if not path:
        pytest.skip(f"{name} is not set (run through ctest, which points it at the built program)")
    return path


def run(*args):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    assert r.returncode == 0, f"{args[0]} failed: {r.stderr}"


def read_safetensors(path):
    """name -> numpy array (BF16 as uint16 bit patterns)."""
    import numpy as np
    data = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + b:8 + n + e], dtype=_NP[t["dtype"]]).reshape(t["shape"])
    return out


def write_safetensors(path, tensors):
    """Writes float32 numpy arrays."""
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        b = a.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def rss_bytes():
    """Resident memory of this process now."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


SKIPPED_ALL = 77  # CTest's SKIP_RETURN_CODE for these tests (tests/python/CMakeLists.txt)


def pytest_sessionfinish(session, exitstatus):
    """A file whose every test skipped (torch or diffusers absent) is reported skipped, not passed."""
    stats = session.config.pluginmanager.get_plugin("terminalreporter").stats
    ran = sum(len(stats.get(k, [])) for k in ("passed", "failed", "error", "xfailed", "xpassed"))
    if exitstatus == 0 and ran == 0 and stats.get("skipped"):
        session.exitstatus = SKIPPED_ALL
