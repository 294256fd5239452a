#!/bin/bash
# Device call 3 (run from the repo root): the modulated norm and the gated residual rounded once (as
# kohakumoss's fused ops): their CUDA contract and tests, the transformer timer (new hashes), then the
# released-geometry pipeline case (released_case.sh), whose picture PSNR failed in call 2.
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || (PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)") &
echo "== contract"
for k in rms_norm_modulate residual_add_gated; do
  timeout 60 $B/tf-kernel-contract --only $k --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|^PASS|missed" | head -6
done
echo "== tests"; timeout 240 $B/test_cuda --gtest_filter='CudaWgmmaProduct.*:CudaTransformer.*:CudaRuntime.*:CudaNorm*' 2>&1 | grep -E "FAILED|PASSED|Failure|Expected|Which is|tests ran|OK \]" | head -40
wait
echo "== transformer timer"
timeout 150 $B/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 5 > $OUT/ours.jsonl 2> $OUT/ours.err
python3 -c "
import json
for l in open('$OUT/ours.jsonl'):
    r = json.loads(l)
    if 'median_ms' in r: print(r['kind'], r['size'], r.get('out_hash'), r['median_ms'], r.get('repeat_identical'))"
echo "== released case"
BIN=$B OUT=$OUT/case timeout 280 bench/generate_vs_torch/released_case.sh 2>&1 | grep -v "^r[0-9].s[0-9]" | tail -14
