#!/usr/bin/env python3
"""bench/speed_summary.py's README table from hand-made benchmark outputs: each row's medians and
ratio, the pair row, the VAE's rows in order, and a clear error for a missing file (no GPU, no
matplotlib: the plot is not drawn here)."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "..", "bench", "speed_summary.py")


def write_lines(path, rows):
    with open(path, "w") as f:
        f.write("some log line\n")
        for r in rows:
            f.write(json.dumps(r) + "\n")


def main():
    with tempfile.TemporaryDirectory() as d:
        enc, vae = os.path.join(d, "enc"), os.path.join(d, "vae")
        os.makedirs(enc)
        os.makedirs(vae)
        write_lines(os.path.join(enc, "ours.jsonl"), [
            {"impl": "setup", "device": "H200"},
            {"impl": "tensorfold", "case": "10", "tokens": 10, "median_ms": 4.0},
            {"impl": "tensorfold", "case": "75", "tokens": 75, "median_ms": 5.0},
            {"impl": "tensorfold", "case": "pair 75+10", "tokens": 85, "median_ms": 5.5}])
        write_lines(os.path.join(enc, "torch.jsonl"), [
            {"impl": "torch-eager", "case": "10", "tokens": 10, "median_ms": 80.0},
            {"impl": "torch-sdpa", "case": "10", "tokens": 10, "median_ms": 100.0},
            {"impl": "torch-eager", "case": "75", "tokens": 75, "median_ms": 90.0},
            {"impl": "torch-sdpa", "case": "75", "tokens": 75, "median_ms": 75.0},
            {"impl": "torch-sdpa", "case": "pair 75+10", "tokens": 85, "median_ms": 77.0}])
        write_lines(os.path.join(vae, "ours.jsonl"), [
            {"impl": "tensorfold", "size": 1024, "what": "decode", "median_ms": 40.0},
            {"impl": "tensorfold", "size": 512, "what": "encode", "median_ms": 5.0}])
        with open(os.path.join(vae, "torch.json"), "w") as f:
            json.dump({"device": "H200", "runs": [
                {"precision": "bf16", "size": 1024, "what": "decode", "median_ms": 60.0},
                {"precision": "fp32", "size": 1024, "what": "decode", "median_ms": 240.0},
                {"precision": "bf16", "size": 512, "what": "encode", "median_ms": 10.0},
                {"precision": "fp32", "size": 512, "what": "encode", "error": "out of memory"}]}, f)
        r = subprocess.run([sys.executable, TOOL, "--encoder", enc, "--vae", vae], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        expect = [
            "| prompt encoder | 10 tokens | 4.00 | 80.00 (transformers bf16) | 20.0x |",
            "| prompt encoder | 75 tokens | 5.00 | 75.00 (transformers bf16) | 15.0x |",
            "| prompt encoder | pair 75+10 | 5.50 | 77.00 (transformers bf16) | 14.0x |",
            "| FLUX.2 VAE encode | 512x512 | 5.00 | 10.00 bf16, - fp32 (diffusers) | - |",
            "| FLUX.2 VAE decode | 1024x1024 | 40.00 | 60.00 bf16, 240.00 fp32 (diffusers) | 1.5x bf16, 6.0x fp32 |"]
        assert lines[2:] == expect, "\n".join(lines)
        tr = os.path.join(d, "tr")
        os.makedirs(tr)
        write_lines(os.path.join(tr, "ours.jsonl"), [
            {"impl": "tensorfold", "kind": "load", "load_s": 0.5},
            {"impl": "tensorfold", "kind": "guidance", "size": 1024, "median_ms": 175.0},
            {"impl": "tensorfold", "kind": "forward", "size": 1024, "median_ms": 88.0}])
        write_lines(os.path.join(tr, "torch.jsonl"), [
            {"impl": "torch-eager", "kind": "forward", "size": 1024, "median_ms": 187.0},
            {"impl": "torch-compile", "kind": "forward", "size": 1024, "median_ms": 88.0},
            {"impl": "torch-eager", "kind": "guidance", "size": 1024, "median_ms": 350.0}])
        r = subprocess.run([sys.executable, TOOL, "--encoder", enc, "--vae", vae, "--transformer", tr],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines()[-2:] == [
            "| MOSS-Image transformer forward | 1024x1024 | 88.00 | 187.00 eager, 88.00 compile (kohakumoss bf16) "
            "| 2.12x eager, 1.00x compile |",
            "| MOSS-Image transformer guidance step | 1024x1024 | 175.00 | 350.00 eager, - compile (kohakumoss bf16) "
            "| 2.00x eager |"], r.stdout
        os.remove(os.path.join(vae, "torch.json"))
        r = subprocess.run([sys.executable, TOOL, "--encoder", enc, "--vae", vae], capture_output=True, text=True)
        assert r.returncode != 0 and "torch.json" in r.stderr, r.stderr
    print("speed_summary: ok")


if __name__ == "__main__":
    main()
