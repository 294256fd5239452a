#!/bin/bash
# Device call 1 (run from the repo root): SiTU rounded once (b6e38c5) and q/k norm + RoPE rounded once
# (fp32 tables) on the GPU: their CUDA contract and tests, the ops' times, the transformer timer (new
# hashes), then the released pipeline case at the 4 seeds x 2 prompts, gated by both builds
# (rel/tf-moss-image-situ: SiTU alone), each run's encoder rows measured against the float32 encoder's.
# PART=a: contract, tests, ops, timer (and the pipeline folder); PART=b: the case and both gates.
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || (PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)") &
if [ "${PART:-a}" = a ]; then
echo "== contract"
for k in situ_gated_product linear_gated_product qkv_norm_rope; do
  timeout 60 $B/tf-kernel-contract --only $k --backend cuda > $OUT/contract-$k.log 2>&1; echo "$k exit $?"
  grep -E "^SUMMARY|^FAIL|missed" $OUT/contract-$k.log | head -6
done
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaWgmmaProduct.*:CudaTransformer.*:CudaElementwise*:-CudaTransformer.ReleasedGeometryCase' > $OUT/test_cuda.log 2>&1; echo "exit $?"
grep -E "FAILED|PASSED|Failure|tests ran" $OUT/test_cuda.log | head -20
echo "== ops"; timeout 60 $B/bench_transformer_ops 4196 > $OUT/ops.txt 2>&1; cat $OUT/ops.txt | head -30
wait
echo "== transformer timer"
timeout 150 $B/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 5 > $OUT/ours.jsonl 2> $OUT/ours.err
python3 -c "
import json
for l in open('$OUT/ours.jsonl'):
    r = json.loads(l)
    if 'median_ms' in r: print(r['kind'], r['size'], r.get('out_hash'), r['median_ms'], r.get('repeat_identical'))"
fi
if [ "${PART:-a}" = b ]; then
echo "== released case"
BIN=$B OUT=$OUT/case timeout 420 bench/generate_vs_torch/released_case.sh 2>&1 | grep -v "^r[0-9].s[0-9]" | tail -30
echo "== the same case gated by the SiTU-only build"
$B/tf-moss-image-situ check pipeline --model $P --case $OUT/case/released-case.safetensors --device cuda > $OUT/gate-situ.log 2>&1
echo "exit $?"; grep -v "^r[0-9].s[0-9]" $OUT/gate-situ.log | tail -22
fi
