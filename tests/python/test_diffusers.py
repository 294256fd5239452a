"""tensorfold.diffusers.AutoencoderKLFlux2 against diffusers' own AutoencoderKLFlux2 on the tiny VAE."""
import pytest

from conftest import TINY, needs_diffusers


@pytest.fixture(scope="module")
def pair():
    import torch
    from diffusers import AutoencoderKLFlux2 as Reference

    from tensorfold.diffusers import AutoencoderKLFlux2
    torch.manual_seed(0)
    return AutoencoderKLFlux2.from_pretrained(TINY / "vae"), Reference.from_pretrained(TINY / "vae").eval()


def close(a, b, tol):
    """The engine at fp32-class precision: ~1e-6 of the largest value from diffusers' float32 here."""
    err = ((a - b).abs().max() / b.abs().max()).item()
    assert err < tol, f"relative max error {err:.2e}"


@needs_diffusers
def test_config_and_batch_norm_buffers_match(pair):
    ours, ref = pair
    for k in ("latent_channels", "block_out_channels", "batch_norm_eps", "patch_size"):
        assert tuple(ours.config[k]) == tuple(ref.config[k]) if isinstance(ref.config[k], (list, tuple)) \
            else ours.config[k] == ref.config[k]
    for name in ("bn.running_mean", "bn.running_var"):
        assert ours.state_dict()[name].equal(ref.state_dict()[name])


@needs_diffusers
def test_encode_mode_and_sample_match(pair):
    import torch
    ours, ref = pair
    x = torch.rand(2, 3, 32, 48, generator=torch.Generator().manual_seed(1)) * 2 - 1
    with torch.no_grad():
        a, b = ours.encode(x).latent_dist, ref.encode(x).latent_dist
        close(a.mode(), b.mode(), 1e-4)
        g = lambda: torch.Generator().manual_seed(5)  # noqa: E731
        close(a.sample(generator=g()), b.sample(generator=g()), 1e-4)
        assert ours.encode(x, return_dict=False)[0].mode().equal(a.mode())


@needs_diffusers
def test_decode_matches(pair):
    import torch
    ours, ref = pair
    z = torch.randn(1, 32, 4, 6, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        pic = ours.decode(z, return_dict=False)[0]
        assert pic.shape == (1, 3, 32, 48) and pic.dtype == torch.float32
        close(pic, ref.decode(z, return_dict=False)[0], 1e-4)
        assert ours.decode(z).sample.equal(pic)


@needs_diffusers
def test_refusals(pair):
    import torch
    ours, _ = pair
    with pytest.raises(ValueError, match="images: dtype bfloat16"):
        ours.encode(torch.zeros(1, 3, 32, 32, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match="not C-contiguous"):
        ours.decode(torch.zeros(1, 32, 8, 4).transpose(2, 3))
    from tensorfold.diffusers import AutoencoderKLFlux2
    with pytest.raises(ValueError, match="torch_dtype"):
        AutoencoderKLFlux2.from_pretrained(TINY / "vae", torch_dtype=torch.bfloat16)
