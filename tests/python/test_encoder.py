"""tensorfold.PromptEncoder on the tiny pipeline: the bytes `tf-moss-image encode` writes."""
import numpy as np
import pytest

import tensorfold
from conftest import TINY, needs_torch, program, read_safetensors, run

PROMPT = "A red cube on a wooden table, morning light"
NEGATIVE = "blurry, low quality"


@pytest.fixture(scope="module")
def encoder():
    return tensorfold.PromptEncoder.from_pretrained(TINY, output="numpy")


@pytest.fixture(scope="module")
def program_out(tmp_path_factory):
    d = tmp_path_factory.mktemp("encode")
    (d / "p.txt").write_text(PROMPT)
    (d / "n.txt").write_text(NEGATIVE)
    run(program("TF_MOSS_IMAGE"), "encode", "--model", TINY, "--prompt-file", d / "p.txt", "--negative-file",
        d / "n.txt", "--out", d / "o.safetensors")
    return read_safetensors(d / "o.safetensors")


def test_prompt_and_negative_are_the_programs_bytes(encoder, program_out):
    e = encoder.encode(PROMPT, negative=NEGATIVE)
    for rows, ids, name in ((e.rows, e.ids, "prompt"), (e.negative_rows, e.negative_ids, "negative")):
        assert rows.dtype == np.uint16 and rows.shape == (len(ids), encoder.hidden)
        assert ids.dtype == np.int32
        assert np.array_equal(ids, program_out[name + ".ids"])
        assert rows.tobytes() == program_out[name + ".rows"].tobytes()


def test_ids_are_the_chat_format_tokens(encoder):
    e = encoder.encode(PROMPT)
    assert e.ids.tolist() == encoder.tokenize(PROMPT)
    assert e.negative_rows is None and e.negative_ids is None


def test_a_list_packs_and_each_prompt_keeps_its_own_bytes(encoder):
    prompts = [PROMPT, "a cat", "two dogs playing in the snow"]
    many = encoder.encode(prompts, negative=["", "bad", "worse"])
    assert len(many.rows) == 3 and len(many.negative_rows) == 3
    for p, rows in zip(prompts, many.rows):
        assert rows.tobytes() == encoder.encode(p).rows.tobytes()


def test_outputs_own_their_memory():
    enc = tensorfold.PromptEncoder.from_pretrained(TINY, output="numpy")
    e = enc.encode(PROMPT)
    expect = e.rows.copy()
    del enc
    assert np.array_equal(e.rows, expect)
    assert not e.rows.flags.owndata and e.rows.base is not None  # a view on the engine's storage, no copy


def test_dlpack_output_round_trips_through_numpy(encoder):
    enc = tensorfold.PromptEncoder.from_pretrained(TINY, output="dlpack")
    e = enc.encode(PROMPT)
    assert np.array_equal(np.from_dlpack(e.ids), encoder.encode(PROMPT).ids)


@needs_torch
def test_torch_rows_are_bf16_with_the_programs_bytes(program_out):
    import torch
    e = tensorfold.PromptEncoder.from_pretrained(TINY, output="torch").encode(PROMPT, negative=NEGATIVE)
    assert e.rows.dtype == torch.bfloat16 and e.ids.dtype == torch.int32
    assert e.rows.view(torch.int16).numpy().tobytes() == program_out["prompt.rows"].tobytes()
    assert e.negative_rows.view(torch.int16).numpy().tobytes() == program_out["negative.rows"].tobytes()
