#!/usr/bin/env python3
"""Reference cases for TensorFold's MOSS-Image prompt encoder gate (tf-moss-image check encoder).

  moss_image_case.py encode --model DIR --out CASE.safetensors
      [--prompt TEXT ...] [--prompt-file F ...] [--token-counts 1,63,64,65,210]
      [--keep-f32-params] [--device cpu|cuda]

The reference is transformers' Qwen3_5TextModel with eager attention and its torch-only DeltaNet
paths (refused when flash-linear-attention, causal-conv1d or kernels would replace them). Two runs of
the same weights: bf16 (as MOSS-Image runs it) and float32 (the bf16 weights widened, TF32 off).

The case is python/cases/case_writer.py's format, component "moss_image.encoder". For every prompt k:
  in.p{k}.ids             I32  [n]          the chat-formatted prompt's ids (raw text when asked)
  in.p{k}.embeddings      F32  [n, hidden]  float32 run: layer 0's input
  steps p{k}.layer.{i} (i < layers) and p{k}.norm, each with
    f32.<step>            F32  [n, hidden]  float32 run: the step's output (the next step's input)
    bf16.<step>           BF16 [n, hidden]  bf16 model: the step alone on bf16(its float32 input)
  whole.p{k}.bf16         BF16 [n, hidden]  bf16 model: the whole prompt's final rows
and metadata: the prompts (text + format), chat format, layers, hidden, and whether A_log and
linear_attn.norm.weight were rounded to bf16 (transformers' bf16 load) or used as stored.
"""
import argparse
import importlib.util
import json
import os
import sys

import tokenizers
import torch
import transformers
from safetensors import safe_open
from tokenizers import Tokenizer
from transformers.models.qwen3_5 import modeling_qwen3_5 as qwen
from transformers.models.qwen3_5.configuration_qwen3_5 import Qwen3_5TextConfig

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import CaseWriter  # noqa: E402

CHAT_PREFIX = "<|im_start|>user\n"
CHAT_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n"
SMALL_F32_PARAMS = ("linear_attn.A_log", "linear_attn.norm.weight")
LAYOUTS = ("model.language_model.", "model.", "")
FILLER = ("A lighthouse keeper paints the sea at dawn, with gulls over green water and a red boat; "
          "the sky turns gold, then blue, while the tide pulls at the rocks and the wind sings. ")


def component(model_dir, name):
    if os.path.exists(os.path.join(model_dir, "model_index.json")):
        return os.path.join(model_dir, name)
    return model_dir


def find_tokenizer(model_dir):
    for cand in (os.path.join(model_dir, "tokenizer", "tokenizer.json"), os.path.join(model_dir, "tokenizer.json"),
                 os.path.join(model_dir, "..", "tokenizer", "tokenizer.json")):
        if os.path.exists(cand):
            return cand
    sys.exit(f"moss_image_case: no tokenizer.json for {model_dir}")


def refuse_fast_kernels(allow):
    present = [m for m in ("fla", "causal_conv1d", "kernels") if importlib.util.find_spec(m) is not None]
    if present and not allow:
        sys.exit("moss_image_case: " + ", ".join(present) + " installed; transformers would use it instead of the "
                 "torch reference path. Run in an environment without it (or pass --allow-fast-kernels).")
    return present


def text_config(te_dir):
    with open(os.path.join(te_dir, "config.json")) as f:
        raw = json.load(f)
    tc = raw.get("text_config", raw)
    tc = {k: v for k, v in tc.items() if k not in ("model_type", "architectures", "transformers_version")}
    cfg = Qwen3_5TextConfig(**tc)
    cfg._attn_implementation = "eager"
    return cfg


def stored_tensors(te_dir):
    """name -> (file, key) over all shards, with the text model's prefix removed."""
    files = [os.path.join(te_dir, f) for f in sorted(os.listdir(te_dir)) if f.endswith(".safetensors")]
    keys = {}
    for f in files:
        with safe_open(f, "pt") as s:
            for k in s.keys():
                keys[k] = f
    prefix = next((p for p in LAYOUTS if p + "embed_tokens.weight" in keys), None)
    if prefix is None:
        sys.exit(f"moss_image_case: {te_dir}: no embed_tokens.weight in any known layout")
    return {k[len(prefix):]: (f, k) for k, f in keys.items() if k.startswith(prefix)}, prefix


def build_model(cfg, tensors, dtype, keep_f32, device):
    """Qwen3_5TextModel holding the stored weights: bf16 (small F32 params kept when asked) or widened."""
    with torch.device("meta"):
        model = qwen.Qwen3_5TextModel(cfg)
    model = model.to_empty(device=device)
    model.rotary_emb = qwen.Qwen3_5TextRotaryEmbedding(config=cfg).to(device)  # buffers were on meta
    handles = {}
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name not in tensors:
                sys.exit(f"moss_image_case: checkpoint lacks {name}")
            f, k = tensors[name]
            if f not in handles:
                handles[f] = safe_open(f, "pt")
            t = handles[f].get_tensor(k)
            if tuple(t.shape) != tuple(p.shape):
                sys.exit(f"moss_image_case: {k} has shape {tuple(t.shape)}, expected {tuple(p.shape)}")
            keep = keep_f32 and name.endswith(SMALL_F32_PARAMS) and t.dtype == torch.float32
            w = t if keep else t.to(torch.bfloat16)  # the bf16 model's weight
            if dtype == torch.float32:
                w = w.float()
            p.data = w.to(device)
    return model.eval()


def encode_ids(tok, text, fmt):
    full = CHAT_PREFIX + text + CHAT_SUFFIX if fmt == "chat" else text
    return tok.encode(full, add_special_tokens=False).ids


def prompt_with_count(tok, n):
    """A prompt whose ids number exactly n: chat format when it fits, raw text below that."""
    overhead = len(encode_ids(tok, "", "chat"))
    fmt = "chat" if n >= overhead else "raw"
    text = ""
    filler = FILLER * (n // 8 + 4)
    lo, hi = 0, len(filler)
    for end in range(len(filler) + 1):  # the count grows with the prefix; take the first exact hit
        c = len(encode_ids(tok, filler[:end], fmt))
        if c == n and (fmt == "chat" or end > 0):
            text = filler[:end]
            return text, fmt
        if c > n:
            break
    sys.exit(f"moss_image_case: cannot make a prompt of exactly {n} tokens")


def run_case(args):
    fast = refuse_fast_kernels(args.allow_fast_kernels)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    te_dir = component(args.model, "text_encoder")
    tok = Tokenizer.from_file(args.tokenizer or find_tokenizer(args.model))
    cfg = text_config(te_dir)
    tensors, prefix = stored_tensors(te_dir)
    device = torch.device(args.device)

    prompts = [(p, "raw" if args.raw else "chat") for p in args.prompt]
    for pf in args.prompt_file:
        with open(pf, encoding="utf-8") as f:
            prompts.append((f.read(), "raw" if args.raw else "chat"))
    for n in [int(x) for x in args.token_counts.split(",") if x]:
        prompts.append(prompt_with_count(tok, n))
    if not prompts:
        sys.exit("moss_image_case: give --prompt, --prompt-file or --token-counts")

    bf = build_model(cfg, tensors, torch.bfloat16, args.keep_f32_params, device)
    f32 = build_model(cfg, tensors, torch.float32, args.keep_f32_params, device)
    L = cfg.num_hidden_layers
    case = CaseWriter("moss_image.encoder", {"torch": torch.__version__, "transformers": transformers.__version__,
                                             "tokenizers": tokenizers.__version__})
    meta_prompts = []
    for k, (text, fmt) in enumerate(prompts):
        ids = encode_ids(tok, text, fmt)
        ids_t = torch.tensor([ids], dtype=torch.long, device=device)
        # float32 run: every step's input, and the final rows
        inputs = [None] * (L + 1)
        hooks = [layer.register_forward_pre_hook(lambda m, a, kw, i=i: inputs.__setitem__(i, (a[0] if a else kw["hidden_states"]).detach().clone()), with_kwargs=True)
                 for i, layer in enumerate(f32.layers)]
        hooks.append(f32.norm.register_forward_pre_hook(lambda m, a: inputs.__setitem__(L, a[0].detach().clone())))
        with torch.no_grad():
            final32 = f32(input_ids=ids_t, use_cache=False).last_hidden_state[0]
        for h in hooks:
            h.remove()
        # bf16 model, each step alone: its input replaced by bf16 of the float32 run's input
        outputs = [None] * (L + 1)

        def replace(i):
            def pre(m, a, kw):
                x = inputs[i].to(torch.bfloat16)
                return ((x,) + tuple(a[1:]), kw) if a else (a, dict(kw, hidden_states=x))
            return pre

        hooks = []
        for i, layer in enumerate(bf.layers):
            hooks.append(layer.register_forward_pre_hook(replace(i), with_kwargs=True))
            hooks.append(layer.register_forward_hook(lambda m, a, o, i=i: outputs.__setitem__(i, (o[0] if isinstance(o, tuple) else o).detach().clone())))
        hooks.append(bf.norm.register_forward_pre_hook(lambda m, a: (inputs[L].to(torch.bfloat16),)))
        hooks.append(bf.norm.register_forward_hook(lambda m, a, o: outputs.__setitem__(L, o.detach().clone())))
        with torch.no_grad():
            bf(input_ids=ids_t, use_cache=False)
        for h in hooks:
            h.remove()
        # bf16 model, whole prompt
        with torch.no_grad():
            final_bf = bf(input_ids=ids_t, use_cache=False).last_hidden_state[0]
        p = f"p{k}."
        case.input(p + "ids", torch.tensor(ids, dtype=torch.int32))
        case.input(p + "embeddings", inputs[0][0].float().cpu().contiguous())
        for i in range(L + 1):
            name = p + (f"layer.{i}" if i < L else "norm")
            f32_out = inputs[i + 1][0] if i < L else final32
            case.step(name, f32_out.float().cpu().contiguous(), outputs[i][0].to(torch.bfloat16).cpu().contiguous())
        case.whole(p + "bf16", final_bf.to(torch.bfloat16).cpu().contiguous())
        meta_prompts.append({"text": text, "format": fmt, "tokens": len(ids)})
        print(f"prompt {k}: {len(ids)} tokens ({fmt})", file=sys.stderr)

    small = "as_stored" if args.keep_f32_params else "rounded_bf16"
    for key, value in {
        "prompts": meta_prompts,
        "chat_prefix": CHAT_PREFIX, "chat_suffix": CHAT_SUFFIX,
        "small_params": small,
        "attn_implementation": "eager",
        "delta_rule": "transformers torch_chunk_gated_delta_rule" + (" (fast kernels present: " + ",".join(fast) + ")" if fast else ""),
        "device": str(device), "checkpoint_layout": prefix or "(top level)",
        "layers": str(L), "hidden": str(cfg.hidden_size),
    }.items():
        case.meta(key, value)
    case.write(args.out)
    print(f"wrote {args.out}: {len(prompts)} prompts, {L} layers + final norm, small params {small}",
          file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("encode", help="write an encoder case")
    e.add_argument("--model", required=True, help="pipeline folder (model_index.json) or text encoder folder")
    e.add_argument("--tokenizer", help="tokenizer.json (default: found beside the model)")
    e.add_argument("--out", required=True)
    e.add_argument("--prompt", action="append", default=[])
    e.add_argument("--prompt-file", action="append", default=[])
    e.add_argument("--token-counts", default="", help="comma-separated exact token counts to make prompts for")
    e.add_argument("--raw", action="store_true", help="--prompt/--prompt-file texts without the chat format")
    e.add_argument("--keep-f32-params", action="store_true",
                   help="use A_log and linear_attn.norm.weight as stored (F32) instead of rounding them to bf16")
    e.add_argument("--device", default="cpu")
    e.add_argument("--allow-fast-kernels", action="store_true")
    args = ap.parse_args()
    run_case(args)


if __name__ == "__main__":
    main()
