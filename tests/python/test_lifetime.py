"""Outputs owned by the returned arrays with no leak (RSS flat over thousands of calls), and Ctrl-C
between a long call's steps raising KeyboardInterrupt cleanly."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import tensorfold
from conftest import TINY, rss_bytes

CALLS = int(os.environ.get("TF_LEAK_CALLS", "2000"))


def flat(call, warmup=200, limit=4 << 20):
    for _ in range(warmup):
        call()
    before = rss_bytes()
    for _ in range(CALLS):
        call()
    grown = rss_bytes() - before
    assert grown < limit, f"RSS grew {grown / 2**20:.1f} MiB over {CALLS} calls"


def test_vae_calls_do_not_leak():
    vae = tensorfold.VAE.from_pretrained(TINY, output="numpy")
    x = np.random.default_rng(1).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
    noise = np.random.default_rng(2).standard_normal((1, 32, 4, 4)).astype(np.float32)

    def call():
        e = vae.encode(x, noise=noise)
        vae.decode(e.latents)
    flat(call)


def test_encoder_calls_do_not_leak():
    enc = tensorfold.PromptEncoder.from_pretrained(TINY, output="numpy")
    flat(lambda: enc.encode("a red cube on a wooden table", negative="blurry"))


def test_ctrl_c_interrupts_between_steps_and_the_engine_stays_usable():
    vae = tensorfold.VAE.from_pretrained(TINY, output="numpy")
    latents = np.zeros((8, 32, 64, 64), np.float32)  # eight 512x512 decodes: seconds on the CPU
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        vae.decode(latents)
    assert time.monotonic() - t0 < 5
    assert vae.decode(np.zeros((1, 32, 4, 4), np.float32)).shape == (1, 3, 32, 32)
