"""tensorfold on a GPU (skipped without torch's CUDA or a CUDA build): CUDA tensors read in place and
returned as CUDA tensors with the bytes of the CPU-tensor path, work ordered on the caller's stream."""
import pytest

import tensorfold
from conftest import HAVE_TORCH, TINY

if HAVE_TORCH:
    import torch

pytestmark = pytest.mark.skipif(not HAVE_TORCH or not torch.cuda.is_available(), reason="no torch with a CUDA GPU")


@pytest.fixture(scope="module")
def vae():
    try:
        return tensorfold.VAE.from_pretrained(TINY, device="cuda", output="torch")
    except ValueError as e:  # a build without CUDA refuses device="cuda" by name
        pytest.skip(str(e))


def latents(vae, seed=3, side=4):
    g = torch.Generator().manual_seed(seed)
    return torch.randn((1, vae.config["latent_channels"], side, side), generator=g, dtype=torch.float32)


def test_cuda_latents_decode_to_cuda_pictures_with_the_cpu_paths_bytes(vae):
    z = latents(vae)
    ref = vae.decode(z)
    out = vae.decode(z.cuda())
    assert not ref.is_cuda and out.is_cuda and out.dtype == torch.float32 and out.shape == ref.shape
    assert torch.equal(out.cpu(), ref)


def test_cuda_images_encode_to_cuda_outputs_with_the_cpu_paths_bytes(vae):
    x = torch.rand((2, 3, 32, 32), generator=torch.Generator().manual_seed(5)) * 2 - 1
    ref = vae.encode(x)
    out = vae.encode(x.cuda())
    assert out.latents.is_cuda and out.feature2.is_cuda
    assert torch.equal(out.latents.cpu(), ref.latents) and torch.equal(out.feature2.cpu(), ref.feature2)
    assert torch.equal(vae.moments(x.cuda()).cpu(), vae.moments(x))


def test_work_is_ordered_on_the_callers_stream(vae):
    z = latents(vae, seed=9)
    ref = vae.decode(z)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        zc = torch.empty_like(z, device="cuda")
        torch.cuda._sleep(200_000_000)  # the copy below lands long after the call is queued
        zc.copy_(z, non_blocking=False)
        out = vae.decode(zc)  # ordered after the copy on s, and s's later work after the decode
        back = out.clone()
    s.synchronize()
    assert torch.equal(back.cpu(), ref)


def test_gpu_memory_comes_back_after_many_calls(vae):
    z = latents(vae).cuda()
    for _ in range(200):
        vae.decode(z)
    torch.cuda.synchronize()
    first = torch.cuda.mem_get_info()[0]
    for _ in range(2000):
        vae.decode(z)
    torch.cuda.synchronize()
    assert abs(torch.cuda.mem_get_info()[0] - first) < 64 << 20


def test_cuda_tensors_are_refused_by_a_cpu_engine():
    cpu_vae = tensorfold.VAE.from_pretrained(TINY, device="cpu", output="torch")
    with pytest.raises(ValueError, match="latents: in GPU memory, but this object computes on the CPU"):
        cpu_vae.decode(torch.zeros((1, cpu_vae.config["latent_channels"], 4, 4), device="cuda"))


def test_numpy_output_refuses_gpu_memory():
    v = tensorfold.VAE.from_pretrained(TINY, device="cuda", output="numpy")
    with pytest.raises(ValueError, match="numpy cannot hold GPU memory"):
        v.decode(torch.zeros((1, v.config["latent_channels"], 4, 4), device="cuda"))


def test_prompt_rows_left_on_the_gpu_have_the_host_rows_bytes():
    enc = tensorfold.PromptEncoder.from_pretrained(TINY, device="cuda", output="torch")
    host = enc.encode(["a cat", "a red fox in the snow"], negative=["", "blurry"])
    gpu = enc.encode(["a cat", "a red fox in the snow"], negative=["", "blurry"], rows_device="cuda")
    for h, g in zip(host.rows + host.negative_rows, gpu.rows + gpu.negative_rows):
        assert g.is_cuda and g.dtype == torch.bfloat16 and torch.equal(g.cpu(), h)
    assert [i.tolist() for i in gpu.ids] == [i.tolist() for i in host.ids]

