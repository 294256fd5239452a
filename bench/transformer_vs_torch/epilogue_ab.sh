#!/usr/bin/env bash
# bench/transformer_vs_torch: one command on the GPU machine. The products' epilogues fused into our
# wgmma kernel against cuBLASLt and the separate element-wise kernels (TF_LINEAR_EPILOGUE): the
# wgmma product's CUDA tests, each op at a picture's tokens and at a guidance step's, then the
# transformer's forward, guidance step and sampling-loop step both ways on one random
# released-geometry checkpoint, with the output hashes (the two ways' sums are equal where cuBLASLt's
# algorithm sums as ours does; a differing hash is reported, not a failure).
#   BIN=.carry/rel OUT=$OUT bench/transformer_vs_torch/epilogue_ab.sh
# BIN holds test_cuda, bench_transformer_ops and bench_transformer_timer; CKPT (/tmp/moss-transformer-random)
# is made by make_checkpoint_gpu.py when absent; SIZES (1024), REPS (5).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "${BIN:-build/release/bench}" && pwd)
OUT=${OUT:-/tmp/epilogue_ab}
CKPT=${CKPT:-/tmp/moss-transformer-random}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$BIN:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
[ -x "$BIN/test_cuda" ] && "$BIN/test_cuda" --gtest_filter='CudaWgmmaProduct.*' 2>&1 | grep -E "FAILED|PASSED|Failure" | tee "$OUT/tests.txt"
"$BIN/bench_transformer_ops" 4196 4196+4196 2>&1 | tee "$OUT/ops.txt" | grep -E "rate \(|product|block's|four"
[ -f "$CKPT/config.json" ] || python3 "$HERE/make_checkpoint_gpu.py" --out "$CKPT" 2>&1 | tail -1
for v in separate fused; do
  TF_LINEAR_EPILOGUE=$v "$BIN/bench_transformer_timer" --model "$CKPT" --sizes "${SIZES:-1024}" --reps "${REPS:-5}" \
    > "$OUT/ours-$v.jsonl" 2> "$OUT/ours-$v.err"
done
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
rows = {}
for v in ("separate", "fused"):
    for line in open(f"{out}/ours-{v}.jsonl"):
        r = json.loads(line)
        if "median_ms" in r:
            rows.setdefault((r["size"], r["kind"]), {})[v] = r
print(f"{'size':>5} {'what':<22} {'separate ms':>12} {'fused ms':>10} {'fused/sep':>9}  hashes")
for (size, kind), d in sorted(rows.items()):
    s, f = d.get("separate"), d.get("fused")
    if not (s and f):
        continue
    hs, hf = s.get("out_hash"), f.get("out_hash")
    same = "-" if hs is None else "same" if hs == hf else f"{hs} / {hf}"
    print(f"{size:>5} {kind:<22} {s['median_ms']:>12.2f} {f['median_ms']:>10.2f} {f['median_ms'] / s['median_ms']:>9.3f}  {same}")
PY
