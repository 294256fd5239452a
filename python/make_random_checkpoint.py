#!/usr/bin/env python3
"""A random MOSS-Image text encoder at any geometry, in the release's layout and tensor names.

Fast and lean (numpy + the safetensors format written directly, no torch or transformers): tensors
are generated in row blocks and streamed into shards, so the released geometry (~15.9 GB) needs
well under 1 GB of memory. Writes a pipeline folder:

  OUT/model_index.json
  OUT/text_encoder/config.json                      (qwen3_5, geometry under text_config)
  OUT/text_encoder/model-0000N-of-0000M.safetensors (model.language_model.<name>; BF16, A_log and
  OUT/text_encoder/model.safetensors.index.json      linear_attn.norm.weight F32 as released)
  OUT/tokenizer/tokenizer.json                      (copied; default: Qwen3's, ids < 151669)

  python3 python/make_random_checkpoint.py --out /tmp/moss-random              # released geometry
  python3 python/make_random_checkpoint.py --out D --layers 4 --hidden 256 ...  # any geometry
"""
import argparse
import gzip
import json
import os
import shutil
import sys

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))

RELEASED = dict(vocab_size=248320, hidden_size=4096, intermediate_size=12288, num_hidden_layers=32,
                num_attention_heads=16, num_key_value_heads=4, head_dim=256, linear_num_key_heads=16,
                linear_num_value_heads=32, linear_key_head_dim=128, linear_value_head_dim=128,
                linear_conv_kernel_dim=4, full_attention_interval=4, rope_theta=10000000.0,
                partial_rotary_factor=0.25, rms_norm_eps=1e-6)


def bf16_bytes(x):
    """float32 array -> bf16 bytes, round to nearest even (as torch)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return r.tobytes()


def tensors(g):
    """(name, dtype, shape, generator of byte blocks) in checkpoint order."""
    H, I = g["hidden_size"], g["intermediate_size"]
    Hk, Hv, dk, dv = (g["linear_num_key_heads"], g["linear_num_value_heads"], g["linear_key_head_dim"],
                      g["linear_value_head_dim"])
    Hq, Hkv, hd = g["num_attention_heads"], g["num_key_value_heads"], g["head_dim"]
    conv = 2 * Hk * dk + Hv * dv
    out = [("embed_tokens.weight", "BF16", (g["vocab_size"], H), ("normal", 1.0))]
    for i in range(g["num_hidden_layers"]):
        p = f"layers.{i}."
        out += [(p + "input_layernorm.weight", "BF16", (H,), ("normal", 0.2)),
                (p + "post_attention_layernorm.weight", "BF16", (H,), ("normal", 0.2))]
        if (i + 1) % g["full_attention_interval"] == 0:
            a = p + "self_attn."
            out += [(a + "q_proj.weight", "BF16", (2 * Hq * hd, H), ("fan_in", H)),
                    (a + "k_proj.weight", "BF16", (Hkv * hd, H), ("fan_in", H)),
                    (a + "v_proj.weight", "BF16", (Hkv * hd, H), ("fan_in", H)),
                    (a + "q_norm.weight", "BF16", (hd,), ("normal", 0.2)),
                    (a + "k_norm.weight", "BF16", (hd,), ("normal", 0.2)),
                    (a + "o_proj.weight", "BF16", (H, Hq * hd), ("fan_in", Hq * hd))]
        else:
            d = p + "linear_attn."
            out += [(d + "in_proj_qkv.weight", "BF16", (conv, H), ("fan_in", H)),
                    (d + "in_proj_z.weight", "BF16", (Hv * dv, H), ("fan_in", H)),
                    (d + "in_proj_b.weight", "BF16", (Hv, H), ("fan_in", H)),
                    (d + "in_proj_a.weight", "BF16", (Hv, H), ("fan_in", H)),
                    (d + "conv1d.weight", "BF16", (conv, 1, g["linear_conv_kernel_dim"]), ("normal", 0.5)),
                    (d + "dt_bias", "BF16", (Hv,), ("dt_bias", None)),
                    (d + "A_log", "F32", (Hv,), ("A_log", None)),
                    (d + "norm.weight", "F32", (dv,), ("one_plus", 0.2)),
                    (d + "out_proj.weight", "BF16", (H, Hv * dv), ("fan_in", Hv * dv))]
        out += [(p + "mlp.gate_proj.weight", "BF16", (I, H), ("fan_in", H)),
                (p + "mlp.up_proj.weight", "BF16", (I, H), ("fan_in", H)),
                (p + "mlp.down_proj.weight", "BF16", (H, I), ("fan_in", I))]
    out.append(("norm.weight", "BF16", (H,), ("normal", 0.2)))
    return out


def blocks(rng, dtype, shape, init, block_elems=1 << 24):
    n = int(np.prod(shape))
    kind, arg = init
    done = 0
    while done < n:
        m = min(block_elems, n - done)
        if kind == "normal":
            x = rng.standard_normal(m, dtype=np.float32) * np.float32(arg)
        elif kind == "fan_in":
            x = rng.standard_normal(m, dtype=np.float32) * np.float32(1.0 / np.sqrt(arg))
        elif kind == "dt_bias":
            x = rng.standard_normal(m, dtype=np.float32) * np.float32(0.5) + np.float32(1.0)
        elif kind == "A_log":
            x = np.log(rng.uniform(0.5, 8.0, m)).astype(np.float32)
        elif kind == "one_plus":
            x = np.float32(1.0) + rng.standard_normal(m, dtype=np.float32) * np.float32(arg)
        else:
            raise ValueError(kind)
        yield bf16_bytes(x) if dtype == "BF16" else x.astype("<f4").tobytes()
        done += m


def item_bytes(it):
    """Stored bytes of a (name, dtype, shape, init) item: BF16 2 bytes an element, F32 4."""
    return int(np.prod(it[2])) * (2 if it[1] == "BF16" else 4)


def group_shards(items, shard_bytes):
    """Items in order, cut into shards before the one that would take a shard past shard_bytes."""
    shards, cur, cur_size = [], [], 0
    for it in items:
        if cur and cur_size + item_bytes(it) > shard_bytes:
            shards.append(cur)
            cur, cur_size = [], 0
        cur.append(it)
        cur_size += item_bytes(it)
    if cur:
        shards.append(cur)
    return shards


def shard_name(s, count):
    return f"model-{s + 1:05d}-of-{count:05d}.safetensors"


def write_tokenizer_and_index(out, tokenizer):
    """The pipeline folder's tokenizer/tokenizer.json (copied, gunzipped when .gz) and model_index.json."""
    tok_dir = os.path.join(out, "tokenizer")
    os.makedirs(tok_dir, exist_ok=True)
    opener = gzip.open if tokenizer.endswith(".gz") else open
    with opener(tokenizer, "rb") as src, open(os.path.join(tok_dir, "tokenizer.json"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    with open(os.path.join(out, "model_index.json"), "w") as f:
        json.dump({"_class_name": "MossImagePipeline", "text_encoder": ["transformers", "Qwen3_5ForConditionalGeneration"],
                   "tokenizer": ["transformers", "Qwen2TokenizerFast"]}, f, indent=1)


def write_shards(te_dir, items, prefix, shard_bytes, seed):
    rng = np.random.default_rng(seed)
    shards = group_shards(items, shard_bytes)
    weight_map, total = {}, 0
    for s, group in enumerate(shards):
        fname = shard_name(s, len(shards))
        header, off = {"__metadata__": {"format": "pt"}}, 0
        for name, dtype, shape, _ in group:
            header[prefix + name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + item_bytes((name, dtype, shape))]}
            off += item_bytes((name, dtype, shape))
            weight_map[prefix + name] = fname
        hb = json.dumps(header, separators=(",", ":")).encode()
        hb += b" " * ((8 - len(hb) % 8) % 8)
        path = os.path.join(te_dir, fname)
        with open(path + ".partial", "wb") as f:
            f.write(len(hb).to_bytes(8, "little"))
            f.write(hb)
            for name, dtype, shape, init in group:
                for b in blocks(rng, dtype, shape, init):
                    f.write(b)
        os.replace(path + ".partial", path)
        total += off
        print(f"  {fname}: {len(group)} tensors, {off / 1e9:.2f} GB", file=sys.stderr)
    with open(os.path.join(te_dir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=1, sort_keys=True)
    return total


def config_json(g):
    n = g["num_hidden_layers"]
    text = {k: v for k, v in g.items() if k not in ("rope_theta", "partial_rotary_factor", "full_attention_interval")}
    text.update(model_type="qwen3_5_text", hidden_act="silu", attention_bias=False, tie_word_embeddings=False,
                max_position_embeddings=32768,
                layer_types=["full_attention" if (i + 1) % g["full_attention_interval"] == 0 else "linear_attention"
                             for i in range(n)],
                rope_parameters={"rope_type": "default", "rope_theta": g["rope_theta"],
                                 "partial_rotary_factor": g["partial_rotary_factor"],
                                 "mrope_section": [11, 11, 10], "mrope_interleaved": True})
    return {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5", "dtype": "bfloat16",
            "tie_word_embeddings": False, "text_config": text,
            "_comment": "random weights written by TensorFold's python/make_random_checkpoint.py"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    for k, v in RELEASED.items():
        ap.add_argument("--" + k.replace("_", "-"), type=type(v), default=v)
    ap.add_argument("--layers", type=int, help="same as --num-hidden-layers")
    ap.add_argument("--layout", choices=["language_model", "model", "bare"], default="language_model")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shard-gb", type=float, default=4.0)
    ap.add_argument("--tokenizer", default=os.path.join(ROOT, "tests", "data", "qwen3-tokenizer.json.gz"))
    args = ap.parse_args()
    g = {k: getattr(args, k) for k in RELEASED}
    if args.layers:
        g["num_hidden_layers"] = args.layers
    prefix = {"language_model": "model.language_model.", "model": "model.", "bare": ""}[args.layout]
    te_dir = os.path.join(args.out, "text_encoder")
    os.makedirs(te_dir, exist_ok=True)
    with open(os.path.join(te_dir, "config.json"), "w") as f:
        json.dump(config_json(g), f, indent=1)
    total = write_shards(te_dir, tensors(g), prefix, int(args.shard_gb * 1e9), args.seed)
    write_tokenizer_and_index(args.out, args.tokenizer)
    print(f"{args.out}: {total / 1e9:.2f} GB of random weights", file=sys.stderr)


if __name__ == "__main__":
    main()
