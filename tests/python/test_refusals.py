"""Refusals: a ValueError naming the argument for bad input (never a silent conversion), MemoryError
for the memory estimate's refusal."""
import shutil

import numpy as np
import pytest
from PIL import Image

import tensorfold
from conftest import TINY


@pytest.fixture(scope="module")
def vae():
    return tensorfold.VAE.from_pretrained(TINY, output="numpy")


@pytest.fixture(scope="module")
def encoder():
    return tensorfold.PromptEncoder.from_pretrained(TINY, output="numpy")


def x(shape=(1, 3, 32, 32), dtype=np.float32):
    return np.zeros(shape, dtype=dtype)


@pytest.mark.parametrize("images, words", [
    (x(dtype=np.float64), ["images", "dtype float64", "float32"]),
    (x(dtype=np.float16), ["images", "dtype float16"]),
    (x((1, 3, 32, 64))[:, :, :, ::2], ["images", "not C-contiguous"]),
    (np.zeros((1, 32, 32, 3), np.float32).transpose(0, 3, 1, 2), ["images", "not C-contiguous"]),
    (x((3, 32, 32)), ["images", "3 dimensions, expected 4"]),
    (x((1, 3, 30, 32)), ["images", "multiples of 16"]),
    (x((1, 4, 32, 32)), ["images", "[B, 3, H, W]"]),
    (x((0, 3, 32, 32)), ["images", "B >= 1"]),
    ([1, 2], ["images", "PIL"]),
])
def test_bad_images(vae, images, words):
    with pytest.raises(ValueError) as e:
        vae.encode(images)
    for w in words:
        assert w in str(e.value)


def test_bad_noise(vae):
    cz = vae.config["latent_channels"]
    with pytest.raises(ValueError, match=r"noise: shape \[1, 32, 4, 5\]"):
        vae.encode(x(), noise=np.zeros((1, cz, 4, 5), np.float32))
    with pytest.raises(ValueError, match="noise: dtype float64"):
        vae.encode(x(), noise=np.zeros((1, cz, 4, 4)))


def test_bad_latents(vae):
    with pytest.raises(ValueError, match=r"latents: shape \[1, 31, 4, 4\]"):
        vae.decode(np.zeros((1, 31, 4, 4), np.float32))
    with pytest.raises(ValueError, match="latents: dtype int32"):
        vae.decode(np.zeros((1, 32, 4, 4), np.int32))
    with pytest.raises(ValueError, match="picture"):
        tensorfold.to_pil(np.zeros((1, 4, 8, 8), np.float32))


def test_pil_picture_of_the_wrong_size(vae):
    with pytest.raises(ValueError, match="multiple"):
        vae.encode(Image.new("RGB", (24, 32)))


def test_memory_estimate_refusals_are_memory_errors(vae, encoder):
    with pytest.raises(MemoryError, match="max_memory"):
        vae.encode(x(), max_memory=1e-6)
    with pytest.raises(MemoryError, match="max_memory"):
        vae.decode(np.zeros((1, 32, 4, 4), np.float32), max_memory=1e-6)
    with pytest.raises(MemoryError, match="prompts"):
        encoder.encode("a cat", max_memory=1e-9)
    with pytest.raises(ValueError, match="max_memory"):
        vae.decode(np.zeros((1, 32, 4, 4), np.float32), max_memory=-1)


@pytest.mark.parametrize("cls", [tensorfold.VAE, tensorfold.PromptEncoder])
def test_missing_folder(cls, tmp_path):
    with pytest.raises(ValueError, match=str(tmp_path / "nope")):
        cls.from_pretrained(tmp_path / "nope")


def test_bad_json(tmp_path):
    shutil.copytree(TINY / "vae", tmp_path / "vae")
    (tmp_path / "vae" / "config.json").write_text('{"latent_channels": 32,')
    with pytest.raises(ValueError, match="config.json"):
        tensorfold.VAE.from_pretrained(tmp_path / "vae")
    te = tmp_path / "pipe"
    shutil.copytree(TINY, te, ignore=shutil.ignore_patterns("*.safetensors"))
    (te / "text_encoder" / "config.json").write_text("[1, 2")
    with pytest.raises(ValueError, match="config.json"):
        tensorfold.PromptEncoder.from_pretrained(te)


def test_bad_device_and_output():
    with pytest.raises(ValueError, match="device: expected 'cpu' or 'cuda', got 'tpu'"):
        tensorfold.VAE.from_pretrained(TINY, device="tpu")
    with pytest.raises(ValueError, match="output"):
        tensorfold.VAE.from_pretrained(TINY, output="jax")


def test_bad_prompts(encoder):
    with pytest.raises(ValueError, match="prompts: expected strings"):
        encoder.encode(["a", 3])
    with pytest.raises(ValueError, match="negative"):
        encoder.encode("a", negative=["b"])
    with pytest.raises(ValueError, match="2 negative prompts for 1"):
        encoder.encode(["a"], negative=["b", "c"])
    with pytest.raises(ValueError, match="at least one"):
        encoder.encode([])


def test_rows_device_refusals(encoder):
    with pytest.raises(ValueError, match="rows_device: expected 'cpu' or 'cuda', got 'tpu'"):
        encoder.encode("a", rows_device="tpu")
    with pytest.raises(ValueError, match="rows_device='cuda': this encoder computes on the CPU"):
        encoder.encode("a", rows_device="cuda")
