#!/usr/bin/env python3
"""Tokens per second, ours (bench_tokenizer, C++) against the reference library (tokenizers), one
thread each, on the same long multilingual text, in one run; prints both and the ratio.

Text: the words of tests/text/corpus.txt and python/tiny/tokenizer_corpus.txt (about forty
scripts, digits, emoji, code) in seeded random order, about 1 MB. Two regimes: the first pass over
the text (each side's word cache emptied before every pass) and warm (words cached).
The reference is timed in this process with its Rust encode (one call per text, no batch threads).
Usage: python3 bench/bench_tokenizer.py --bench build/cpu/bench/bench_tokenizer [--tokenizer F]
"""
import argparse
import gzip
import json
import os
import random
import re
import subprocess
import tempfile
import time

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
from tokenizers import Tokenizer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def long_text(size):
    words = []
    for p in ("tests/text/corpus.txt", "python/tiny/tokenizer_corpus.txt"):
        with open(os.path.join(ROOT, p), encoding="utf-8") as f:
            t = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), f.read())
        words += re.findall(r"\S+\s*", t)
    rng = random.Random(1234)
    out, n = [], 0
    while n < size:
        w = rng.choice(words)
        out.append(w)
        n += len(w.encode())
    return "".join(out)


def best_time(fn, min_total=2.0, min_reps=3):
    times, start = [], time.perf_counter()
    while len(times) < min_reps or time.perf_counter() - start < min_total:
        t = fn()
        times.append(t)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--tokenizer", default=os.path.join(ROOT, "tests/data/qwen3-tokenizer.json.gz"))
    ap.add_argument("--bytes", type=int, default=1 << 20)
    args = ap.parse_args()
    text = long_text(args.bytes)
    # prompts: pieces of about 2 KB cut at spaces
    prompts, start = [], 0
    while start < len(text):
        end = text.find(" ", start + 2000)
        end = len(text) if end < 0 else end
        prompts.append(text[start:end])
        start = end
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False, newline="") as f:
        f.write("\x1e".join(prompts))
        text_path = f.name
    if args.tokenizer.endswith(".gz"):
        ref = Tokenizer.from_str(gzip.open(args.tokenizer).read().decode())
    else:
        ref = Tokenizer.from_file(args.tokenizer)
    n_tokens = len(ref.encode(text).ids)

    def ref_first():
        ref.model._clear_cache()
        t = time.perf_counter()
        ref.encode(text)
        return time.perf_counter() - t

    def ref_warm():
        t = time.perf_counter()
        ref.encode(text)
        return time.perf_counter() - t

    def ref_prompts():
        ref.model._clear_cache()
        t = time.perf_counter()
        for p in prompts:
            ref.encode(p)
        return time.perf_counter() - t

    ref.encode(text)
    prompt_tokens = sum(len(ref.encode(p).ids) for p in prompts)
    ref_t = {"prompts": best_time(ref_prompts), "first": best_time(ref_first), "warm": best_time(ref_warm)}

    env = dict(os.environ, TF_BENCH_TOKENIZER=args.tokenizer, TF_BENCH_TEXT=text_path)
    r = subprocess.run([args.bench, "--benchmark_format=json"], env=env, capture_output=True, text=True, check=True)
    os.unlink(text_path)
    ours = {}
    for b in json.loads(r.stdout)["benchmarks"]:
        key = "first" if "FirstPass" in b["name"] else "prompts" if "Prompts" in b["name"] else "warm"
        ours[key] = b["real_time"] / 1e3  # ms -> s
    print(f"text: {len(text.encode())} bytes, {len(text)} characters, {n_tokens} tokens; tokenizer {os.path.basename(args.tokenizer)}")
    labels = {"prompts": f"{len(prompts)} prompts one by one, first pass", "first": "whole text, first pass", "warm": "whole text, words cached"}
    for k in ("prompts", "first", "warm"):
        n = prompt_tokens if k == "prompts" else n_tokens
        o, t = n / ours[k], n / ref_t[k]
        print(f"{labels[k]:40s}: ours {o / 1e6:6.2f} M tokens/s, tokenizers {t / 1e6:6.2f} M tokens/s, ratio ours/reference {o / t:5.2f}x")


if __name__ == "__main__":
    main()
