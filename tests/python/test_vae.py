"""tensorfold.VAE on the tiny pipeline: the bytes `tf-flux2-vae encode`/`decode` write."""
import numpy as np
import pytest
from PIL import Image

import tensorfold
from conftest import PICTURE, TINY, needs_torch, program, read_safetensors, run, write_safetensors


@pytest.fixture(scope="module")
def vae():
    return tensorfold.VAE.from_pretrained(TINY, output="numpy")


@pytest.fixture(scope="module")
def noise(vae):
    cz = vae.config["latent_channels"]
    return np.random.default_rng(7).standard_normal((1, cz, 4, 4)).astype(np.float32)


def program_encode(tmp_path, image, noise=None):
    out = tmp_path / "enc.safetensors"
    args = ["--mean"]
    if noise is not None:
        write_safetensors(tmp_path / "noise.safetensors", {"noise": noise[0]})
        args = ["--noise", tmp_path / "noise.safetensors"]
    run(program("TF_FLUX2_VAE"), "encode", "--model", TINY, "--image", image, *args, "--save-latents", "--out", out)
    return read_safetensors(out)


def test_pil_encode_mean_is_the_programs_bytes(vae, tmp_path):
    ref = program_encode(tmp_path, PICTURE)
    e = vae.encode(Image.open(PICTURE))
    assert e.latents.dtype == np.float32 and e.latents.shape == (1, *ref["latents"].shape)
    assert e.latents[0].tobytes() == ref["latents"].tobytes()
    assert e.feature2[0].tobytes() == ref["feature2"].tobytes()


def test_tensor_encode_with_noise_is_the_programs_bytes(vae, noise, tmp_path):
    ref = program_encode(tmp_path, PICTURE, noise)
    x = tensorfold.VAE.from_pretrained(TINY, output="numpy")._input(Image.open(PICTURE))
    x = np.from_dlpack(x)
    assert x.dtype == np.float32 and x.shape == (1, 3, 32, 32) and -1 <= x.min() and x.max() <= 1
    e = vae.encode(x, noise=noise)
    assert e.latents[0].tobytes() == ref["latents"].tobytes()
    assert e.feature2[0].tobytes() == ref["feature2"].tobytes()


def test_decode_to_pil_is_the_programs_png(vae, tmp_path):
    latents = vae.encode(Image.open(PICTURE)).latents
    write_safetensors(tmp_path / "z.safetensors", {"latents": latents[0]})
    run(program("TF_FLUX2_VAE"), "decode", "--model", TINY, "--latents", tmp_path / "z.safetensors", "--out",
        tmp_path / "out.png")
    pictures = vae.decode(latents)
    assert pictures.dtype == np.float32 and pictures.shape == (1, 3, 32, 32)
    ours = tensorfold.to_pil(pictures)[0]
    assert ours.tobytes() == Image.open(tmp_path / "out.png").convert("RGB").tobytes()


def test_a_batch_is_its_pictures_one_by_one(vae, noise):
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (2, 3, 32, 48)).astype(np.float32)
    n = rng.standard_normal((2, noise.shape[1], 4, 6)).astype(np.float32)
    both = vae.encode(x, noise=n)
    pics = vae.decode(both.latents)
    assert both.feature2.shape == (2, 5 + 2 * 3, 4 * noise.shape[1])
    for b in range(2):
        one = vae.encode(x[b:b + 1], noise=n[b:b + 1])
        assert both.latents[b].tobytes() == one.latents[0].tobytes()
        assert both.feature2[b].tobytes() == one.feature2[0].tobytes()
        assert pics[b].tobytes() == vae.decode(one.latents)[0].tobytes()


def test_moments_mean_is_the_posterior_mean(vae):
    x = np.random.default_rng(4).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
    m = vae.moments(x)
    cz = vae.config["latent_channels"]
    assert m.shape == (1, 2 * cz, 4, 4)
    assert m[:, :cz].tobytes() == vae.encode(x).latents.tobytes()


def test_dlpack_in_and_out_without_a_framework(vae):
    d = tensorfold.VAE.from_pretrained(TINY, output="dlpack")
    x = np.random.default_rng(5).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
    z = d.encode(x).latents  # a DLPack array, fed straight back in
    assert np.from_dlpack(d.decode(z)).tobytes() == vae.decode(vae.encode(x).latents).tobytes()


@needs_torch
def test_torch_in_and_out(vae):
    import torch
    t = tensorfold.VAE.from_pretrained(TINY, output="torch")
    x = torch.rand(1, 3, 32, 32) * 2 - 1
    e = t.encode(x)
    assert isinstance(e.latents, torch.Tensor) and e.latents.dtype == torch.float32
    assert e.latents.numpy().tobytes() == vae.encode(x.numpy()).latents.tobytes()
    pics = t.decode(e.latents)
    assert pics.shape == (1, 3, 32, 32)
    assert tensorfold.to_pil(pics)[0].tobytes() == tensorfold.to_pil(vae.decode(e.latents.numpy()))[0].tobytes()
