"""tensorfold.MossImagePipeline on the tiny pipeline: the bytes `tf-moss-image generate` writes; the
step callback; refusals."""
import numpy as np
import pytest
from PIL import Image

import tensorfold
from conftest import TINY, program, run


@pytest.fixture(scope="module")
def pipe():
    return tensorfold.MossImagePipeline.from_pretrained(TINY, output="numpy")


def test_picture_is_the_programs_png(pipe, tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("A red fox in the snow, watercolour.")
    png = tmp_path / "picture.png"
    run(program("TF_MOSS_IMAGE"), "generate", "--model", TINY, "--prompt-file", prompt, "--width", "32",
        "--height", "48", "--steps", "3", "--seed", "7", "--out", png)
    got = pipe("A red fox in the snow, watercolour.", width=32, height=48, num_inference_steps=3, seed=7)
    assert got.size == (32, 48)
    assert np.asarray(got).tobytes() == np.asarray(Image.open(png).convert("RGB")).tobytes()
    again = pipe("A red fox in the snow, watercolour.", width=32, height=48, num_inference_steps=3, seed=7,
                 output_type="np")
    assert again.dtype == np.uint8 and again.shape == (48, 32, 3) and again.tobytes() == np.asarray(got).tobytes()
    assert pipe.latents.shape == (128, 3, 2)


def test_callback_sees_every_step_and_can_stop(pipe):
    seen = []
    pipe("a fox", width=32, height=32, num_inference_steps=4, callback_on_step_end=lambda i, n, x: seen.append((i, n, x.shape)))
    assert seen == [(i, 4, (128, 2, 2)) for i in range(4)]

    def stop(i, n, x):
        if i == 1:
            raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        pipe("a fox", width=32, height=32, num_inference_steps=4, callback_on_step_end=stop)
    assert pipe("a fox", width=32, height=32, num_inference_steps=1).size == (32, 32)  # still usable


def test_refusals(pipe, tmp_path):
    with pytest.raises(ValueError, match="width 40"):
        pipe("a fox", width=40, height=32)
    with pytest.raises(ValueError, match="steps 0"):
        pipe("a fox", width=32, height=32, num_inference_steps=0)
    with pytest.raises(ValueError, match="guidance"):
        pipe("a fox", width=32, height=32, guidance_scale=-1.0)
    with pytest.raises(ValueError, match="output_type"):
        pipe("a fox", width=32, height=32, output_type="latent")
    for seed in (1 << 64, -(1 << 63) - 1, 1.5, True):
        with pytest.raises(ValueError, match="seed"):
            pipe("a fox", width=32, height=32, num_inference_steps=1, seed=seed)
    with pytest.raises(ValueError, match="no model_index.json|not a folder"):
        tensorfold.MossImagePipeline.from_pretrained(tmp_path)
    small = tensorfold.MossImagePipeline.from_pretrained(TINY, max_memory=0.001, output="numpy")
    with pytest.raises(MemoryError, match="GiB"):
        small("a fox", width=32, height=32)


def test_negative_seed_is_its_twos_complement(pipe):
    # torch reads manual_seed(-5) as 2**64 - 5 and seeds MT19937 with its low 32 bits
    a = pipe("a fox", width=32, height=32, num_inference_steps=1, seed=-5)
    b = pipe("a fox", width=32, height=32, num_inference_steps=1, seed=(1 << 32) - 5)
    assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
