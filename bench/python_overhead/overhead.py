"""The Python package's cost over the C++ calls it wraps, on one GPU: tensorfold.VAE.decode of CUDA
latents into CUDA pictures and tensorfold.PromptEncoder.encode of a prompt of about 75 tokens, against
bench_python_peer's same calls from C++ (the memory check, Vae::decode_on_device; PromptEncoder::encode
with its tokenizing), each the median of --reps after 3 warm-ups, the C++ program run in the same call.
  python3 overhead.py --model PIPE --bin DIR [--size 1024] [--tokens 75] [--reps 15]
PIPE: a pipeline folder (vae/, text_encoder/, tokenizer/); DIR holds bench_python_peer; the package on
PYTHONPATH, built with CUDA.
"""
import argparse
import json
import statistics
import subprocess
import time

import torch

import tensorfold


def median_ms(f, reps):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        torch.cuda.synchronize()  # the engine's work is ordered before torch's stream
        t.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(t)


def program(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--tokens", type=int, default=75)
    ap.add_argument("--reps", type=int, default=15)
    a = ap.parse_args()

    vae = tensorfold.VAE.from_pretrained(a.model, device="cuda", output="torch")
    d = vae.config["downscale"]
    z = torch.randn((1, vae.config["latent_channels"], a.size // d, a.size // d), device="cuda")
    py_dec = median_ms(lambda: vae.decode(z), a.reps)
    del vae

    enc = tensorfold.PromptEncoder.from_pretrained(a.model, device="cuda")
    words = "a photograph of a tabby cat on a sunlit windowsill with soft light".split()
    prompt, n = "", 0
    while n < a.tokens:  # grow the prompt word by word to the wanted token count in the chat format
        prompt = (prompt + " " + words[len(prompt.split()) % len(words)]).strip()
        n = len(enc.tokenize(prompt))
    py_enc = median_ms(lambda: enc.encode([prompt]), a.reps)
    del enc
    peer = program([f"{a.bin}/bench_python_peer", "--model", a.model, "--prompt", prompt, "--size", str(a.size),
                    "--reps", str(a.reps)])
    cc_dec = next(r for r in peer if r["what"] == "decode")["median_ms"]
    cc_enc = next(r for r in peer if r["what"] == "encode")
    assert cc_enc["tokens"] == n, f"the C++ call tokenized {cc_enc['tokens']} tokens, Python {n}"
    cc_enc = cc_enc["median_ms"]

    print(f"{torch.cuda.get_device_name()}; medians of {a.reps}")
    print(f"{'call':<40} {'python ms':>10} {'c++ ms':>10} {'overhead':>9}")
    for what, p, c in ((f"VAE.decode {a.size}^2 (CUDA in, CUDA out)", py_dec, cc_dec),
                       (f"PromptEncoder.encode, {n} tokens", py_enc, cc_enc)):
        print(f"{what:<40} {p:>10.3f} {c:>10.3f} {100 * (p / c - 1):>8.1f}%")


if __name__ == "__main__":
    main()
