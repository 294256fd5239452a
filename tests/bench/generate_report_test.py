#!/usr/bin/env python3
"""bench/generate_vs_torch/report.py: the parser of tf-moss-image generate's summary line (the CUDA and the
CPU form, after progress bars, absent) and the table from hand-made JSON lines: medians, ratios, the
sampling stage's FLOPs and share of the matrix rate, the compile line, the large picture (no GPU, no torch)."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "..", "bench", "generate_vs_torch", "report.py")
spec = importlib.util.spec_from_file_location("generate_report", TOOL)
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

# the format of tools/tf-moss-image/generate.cpp's last line, CUDA form
CUDA = ("picture 1024x1024 -> /out/ours-1024.png on cuda: 8.91 s without loads (encode 0.005 s, 50 steps 8.80 s = "
        "0.176 s/step, decode 0.041 s); loads 12.30 s (encoder 6.10, transformer 5.20, vae 1.00); 29 + 12 prompt "
        "tokens; peak host memory 1.20 GiB; peak GPU memory: 30.12 GiB (in use now 1.00 GiB)")
CPU = ("picture 64x64 -> /tmp/x.png on cpu: 0.30 s without loads (encode 0.009 s, 8 steps 0.28 s = 0.035 s/step, "
       "decode 0.007 s); loads 0.03 s (encoder 0.03, transformer 0.00, vae 0.00); 25 + 12 prompt tokens; "
       "peak host memory 0.01 GiB")


def check(cond, what):
    if not cond:
        sys.exit(f"generate_report_test: {what}")


def near(a, b, tol=1e-9):
    return a is not None and abs(a - b) <= tol * max(1.0, abs(b))


def main():
    r = report.parse_summary("encoder: ...\ntransformer: ...\nsteps [#####     ] 25/50\r steps [##########] 50/50\r"
                             + CUDA + "\n")
    want = dict(width=1024, height=1024, png="/out/ours-1024.png", device="cuda", total_s=8.91, encode_s=0.005,
                sampler_steps=50, sample_s=8.80, step_s=0.176, decode_s=0.041, loads_s=12.30, load_encoder_s=6.10,
                load_transformer_s=5.20, load_vae_s=1.00, prompt_tokens=29, negative_tokens=12, peak_host_gib=1.20,
                peak_gpu_gib=30.12)
    check(r == want, f"CUDA line parsed as {r}")
    c = report.parse_summary(CPU)
    check(c is not None and c["device"] == "cpu" and "peak_gpu_gib" not in c and c["sampler_steps"] == 8
          and c["load_encoder_s"] == 0.03 and c["negative_tokens"] == 12, f"CPU line parsed as {c}")
    check(report.parse_summary("tf-moss-image: error: out of memory\n") is None, "a failed run gave a summary")

    with tempfile.TemporaryDirectory() as d:
        err = os.path.join(d, "ours.err")
        with open(err, "w") as f:
            f.write("tf-moss-image: --model /x: not a folder\n")
        p = subprocess.run([sys.executable, TOOL, "ours-line", err, "--rep", "2"], capture_output=True, text=True)
        row = json.loads(p.stdout)
        check(p.returncode == 1 and row["rep"] == 2 and "no summary line" in row["error"], f"failed run: {p.stdout}")
        with open(err, "w") as f:
            f.write(CUDA + "\n")
        p = subprocess.run([sys.executable, TOOL, "ours-line", err, "--rep", "1"], capture_output=True, text=True)
        row = json.loads(p.stdout)
        check(p.returncode == 0 and row["impl"] == "ours" and row["total_s"] == 8.91, f"ours-line: {p.stdout}")

        ours = os.path.join(d, "ours.jsonl")
        with open(ours, "w") as f:
            for rep, total in enumerate((9.0, 8.0, 8.4)):
                f.write(json.dumps(dict(want, impl="ours", kind="picture", rep=rep, total_s=total, sample_s=8.0)) + "\n")
            f.write(json.dumps(dict(want, impl="ours", kind="picture", rep=0, width=2048, height=2048, png="big.png",
                                    sampler_steps=4, total_s=5.5, sample_s=4.0, peak_gpu_gib=40.5)) + "\n")
        torch_rows = [
            dict(impl="torch-eager", kind="load", width=1024, height=1024, encoder_s=20.0, transformer_s=9.0,
                 vae_s=1.0, device="NVIDIA H200"),
            dict(impl="torch-eager", kind="picture", rep=0, width=1024, height=1024, encode_s=0.5, sample_s=16.0,
                 decode_s=0.5, total_s=17.0, step_s=0.32, sampler_steps=50, prompt_tokens=29, negative_tokens=12),
            dict(impl="torch-eager", kind="picture", rep=1, width=1024, height=1024, encode_s=0.5, sample_s=14.0,
                 decode_s=0.5, total_s=15.0, step_s=0.28, sampler_steps=50, prompt_tokens=29, negative_tokens=12),
            dict(impl="torch-eager", kind="summary", width=1024, height=1024, peak_gpu_gib=33.0),
            dict(impl="torch-compile", kind="compile", width=1024, height=1024, compile_s=170.5, cond_s=100.0,
                 uncond_s=70.5, graphs=2, graph_breaks=0),
            dict(impl="torch", kind="matmul", n=8192, median_ms=1.0, tflops=800.0),
        ]
        tj = os.path.join(d, "torch.jsonl")
        with open(tj, "w") as f:
            f.write("a log line\n" + "".join(json.dumps(x) + "\n" for x in torch_rows))
        p = subprocess.run([sys.executable, TOOL, "table", ours, tj, "--size", "1024"], capture_output=True, text=True)
        out = p.stdout
        check(p.returncode == 0, f"table failed: {p.stderr}")
        whole = next((ln for ln in out.splitlines() if ln.startswith("WHOLE picture")), "")
        # ours' median 8.4 s, torch eager's 16.0 s: 1.90x
        check("8.400" in whole and "16.000" in whole and "1.90x" in whole, f"whole row: {whole!r}\n{out}")
        flops = 50 * report.step_flops(dict(dim=3072, ffn=8192, layers=42), 64 * 64, 29, 12)
        share = round(100 * flops / 8.0 / 1e12 / 800.0)
        check(f"{share}% of the bf16 matrix rate" in out, f"share {share}% not in\n{out}")
        check("torch.compile: 170.5 s to compile" in out, f"compile line missing\n{out}")
        check("ours at 2048x2048, 4 steps: 5.500 s" in out and "40.50 GiB" in out, f"2048 line missing\n{out}")
        check("ours 8.40 s meets it" in out, f"target line missing\n{out}")
        # the FLOPs of one guidance step: 42 blocks at 4096 + 29 rows, 41 at 4096 + 12 rows
        block = lambda n: 2 * n * (4 * 3072 ** 2 + 3 * 8192 * 3072) + 4 * n * n * 3072  # noqa: E731
        check(report.step_flops(dict(dim=3072, ffn=8192, layers=42), 4096, 29, 12) == 42 * block(4125) + 41 * block(4108),
              "step_flops")
    print("generate_report_test: ok")


if __name__ == "__main__":
    main()
