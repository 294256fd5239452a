#!/usr/bin/env python3
"""bench_transformer_timer on the tiny checkpoint on the CPU with one rep: a load line with the
geometry, a forward and a guidance line per size (latents size/16 a side, finite, repeating bytes),
errors naming the flag; then bench/transformer_vs_torch/report.py's table from its lines and a
hand-made torch side (no torch needed).

  transformer_timer_test.py BENCH_TRANSFORMER_TIMER TINY_CHECKPOINT_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "..", "..", "bench", "transformer_vs_torch", "report.py")


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def check_flops(geometry):
    """report.py's FLOP count against its docstring's formula written out by hand, 4x4 latents."""
    sys.path.insert(0, os.path.dirname(REPORT))
    import report
    hw, L, Ln, D, F = 16, 9, 3, 64, 96

    def one(length, blocks):
        n = hw + length
        joint = 2 * n * (4 * D * D + 3 * F * D) + 4 * n * n * D
        text = 2 * length * (4 * D * D + 3 * F * D) + 4 * length * length * D
        embed = 2 * length * 48 * D + 2 * hw * 16 * D + 2 * hw * D * 16 + 2 * (32 * D + D * D + 8 * D * D)
        return embed + 2 * text + blocks * joint

    row = {"h": 4, "w": 4, "text": L, "uncond_text": Ln}
    assert report.flops(geometry, dict(row, kind="forward")) == one(L, 4)
    assert report.flops(geometry, dict(row, kind="guidance")) == one(L, 4) + one(Ln, 3)


def main():
    timer, model = sys.argv[1], sys.argv[2]
    r = run([timer, "--model", model, "--sizes", "96,64", "--text", "9", "--uncond-text", "3", "--reps", "1",
             "--device", "cpu"])
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert all(row["impl"] == "tensorfold" for row in rows), rows
    load = rows[0]
    assert load["kind"] == "load" and load["released"] is False and load["load_s"] >= 0, load
    assert (load["dim"], load["layers"], load["latent_channels"], load["skip_layer"]) == (64, 4, 16, 2), load
    timed = rows[1:]
    assert [(row["size"], row["kind"]) for row in timed] == [
        (64, "forward"), (64, "guidance"), (96, "forward"), (96, "guidance")], timed  # smallest first
    for row in timed:
        assert row["h"] == row["w"] == row["size"] // 16 and row["text"] == 9, row
        assert len(row["runs"]) == 1 and row["median_ms"] > 0, row
        assert row["nonfinite"] == 0 and row["repeat_identical"] is True, row
        if row["kind"] == "guidance":
            assert row["uncond_text"] == 3 and row["skip_layer"] == 2, row

    for bad, flag in ((["--sizes", "70"], "--sizes"), (["--reps", "0"], "--reps"), (["--color", "red"], "--color")):
        r = run([timer, "--model", model, "--device", "cpu", *bad])
        assert r.returncode != 0 and flag in r.stderr, (bad, r.stderr)
    r = run([timer, "--model", os.path.join(model, "missing"), "--device", "cpu"])
    assert r.returncode != 0 and "missing" in r.stderr, r.stderr

    with tempfile.TemporaryDirectory() as d:
        ours, torch = os.path.join(d, "ours.jsonl"), os.path.join(d, "torch.jsonl")
        with open(ours, "w") as f:
            f.write(json.dumps(load) + "\n")
            for row in timed:
                f.write(json.dumps(dict(row, median_ms=2.0)) + "\n")
        with open(torch, "w") as f:
            f.write("a log line\n")
            f.write(json.dumps({"impl": "torch", "kind": "matmul", "n": 256, "median_ms": 1.0, "tflops": 0.5}) + "\n")
            for row in timed:
                keep = {k: row[k] for k in ("kind", "size", "h", "w", "text", "uncond_text", "skip_layer") if k in row}
                f.write(json.dumps(dict(keep, impl="torch-eager", median_ms=6.0)) + "\n")
                f.write(json.dumps({"impl": "torch-compile", "kind": row["kind"], "size": row["size"],
                                    "skipped": "compile budget"}) + "\n")
        r = run([sys.executable, REPORT, ours, torch])
        assert r.returncode == 0, r.stderr
        out = r.stdout
        assert "dim 64, 4 layers" in out and "64x64 (latents 4x4)" in out and "96x96 (latents 6x6)" in out, out
        forward = next(line for line in out.splitlines() if line.startswith("forward"))
        assert forward.split()[1:6] == ["2.00", "6.00", "skipped", "3.00x", "-"], forward
        r = run([sys.executable, REPORT, os.path.join(d, "absent.jsonl")])
        assert r.returncode != 0 and "absent.jsonl" in r.stderr, r.stderr
    check_flops(load)
    print("transformer_timer: ok")


if __name__ == "__main__":
    main()
