"""Prints bench/vae_vs_torch's table: ours against diffusers at fp32, tf32 and bf16, medians,
ratios (torch time / ours: above 1 means ours is faster) and TFLOP/s against the bf16 matrix rate
measured in the same run. FLOPs are counted from the FLUX.2 geometry (convs and attention)."""
import json
import sys


def conv(co, ci, k, h, w):
    return 2.0 * co * ci * k * k * h * w


def resnet(ci, co, h, w):
    f = conv(co, ci, 3, h, w) + conv(co, co, 3, h, w)
    return f + (conv(co, ci, 1, h, w) if ci != co else 0)


def attention(c, h, w):
    n = h * w
    return 4 * conv(c, c, 1, h, w) + 4.0 * n * n * c


def encoder_flops(s, ch=(128, 256, 512, 512), layers=2):
    f, h, c = conv(128, 3, 3, s, s), s, ch[0]
    for i, co in enumerate(ch):
        for _ in range(layers):
            f, c = f + resnet(c, co, h, h), co
        if i < len(ch) - 1:
            f, h = f + conv(c, c, 3, h // 2, h // 2), h // 2
    f += 2 * resnet(c, c, h, h) + attention(c, h, h)
    return f + conv(64, c, 3, h, h) + conv(64, 64, 1, h, h)


def decoder_flops(s, ch=(512, 512, 256, 128), layers=3):
    h = s // 8
    f = conv(32, 32, 1, h, h) + conv(ch[0], 32, 3, h, h)
    c = ch[0]
    f += 2 * resnet(c, c, h, h) + attention(c, h, h)
    for i, co in enumerate(ch):
        for _ in range(layers):
            f, c = f + resnet(c, co, h, h), co
        if i < len(ch) - 1:
            f, h = f + conv(c, c, 3, 2 * h, 2 * h), 2 * h
    return f + conv(3, c, 3, h, h)


def main(torch_json, ours_jsonl):
    t = json.load(open(torch_json))
    ours = [json.loads(l) for l in open(ours_jsonl) if l.startswith("{")]
    rate = t["bf16_matmul_tflops"]
    print(f"device: {t['device']}; torch {t['torch']}; bf16 matrix rate measured in this run: {rate:.0f} TFLOP/s")
    print("ratio = torch median / ours median (above 1: ours faster); ours at fp32-class precision (split-bf16)")
    hdr = f"{'what':7} {'size':>5} {'ours ms':>9} {'TFLOP/s':>8} {'%bf16':>6} {'peak GiB':>8} |" + "".join(
        f" {p + ' ms':>10} {'ratio':>6}" for p in ("fp32", "tf32", "bf16"))
    print(hdr)
    print("-" * len(hdr))
    for o in sorted(ours, key=lambda r: (r["what"] != "encode", r["size"])):
        s, what = o["size"], o["what"]
        widths = tuple(reversed(t.get("decoder_widths", (128, 256, 512, 512))))
        fl = encoder_flops(s) if what == "encode" else decoder_flops(s, widths)
        tf = fl / (o["median_ms"] * 1e-3) / 1e12
        line = f"{what:7} {s:>5} {o['median_ms']:>9.2f} {tf:>8.1f} {100 * tf / rate:>5.1f}% {o['peak_gib']:>8.2f} |"
        for p in ("fp32", "tf32", "bf16"):
            r = [x for x in t["runs"] if x["precision"] == p and x["size"] == s and x["what"] == what]
            if r and "median_ms" in r[0]:
                line += f" {r[0]['median_ms']:>10.2f} {r[0]['median_ms'] / o['median_ms']:>6.2f}"
            else:
                line += f" {'n/a':>10} {'':>6}"
        print(line)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
