#!/bin/bash
# Device call 8: the wgmma product's TMA-store epilogue, qkv_norm_rope one token a block, the norm's
# loads hoisted: tests, contract, ops; the transformer's bytes (hash against call 6) and time, fused
# and separate; then the whole picture with EPI.
set -u
cd "$(dirname "$0")/.."
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaWgmmaProduct.*:CudaTransformer.*:CudaOps.*' 2>&1 | grep -E "FAILED|PASSED|Failure|Expected|Which is|of [0-9]+ values|SKIPPED|tests ran|x [0-9]+ x" | head -30
echo "== contract"
for k in qkv_norm_rope rms_norm_modulate rms_norm_plain rms_norm_one_plus residual_add_rms_norm_one_plus; do $B/tf-kernel-contract --only $k --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL" | head -3; done
for k in linear "linear_gated_product (situ)"; do TF_LINEAR_EPILOGUE=fused TF_GEMM=wgmma timeout 100 $B/tf-kernel-contract --only "$k" --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|^PASS" | head -3; done
echo "== ops"; timeout 100 $B/bench_transformer_ops 4196 2>&1 | grep -vE "text's form"
echo "== transformer"
timeout 120 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out /tmp/moss-pipeline-random --parts transformer 2>&1 | tail -1
echo "== timer (call 6's hashes: forward 358340b47465cfd5, guidance 165d645ae05d741e)"
for v in separate fused; do
  TF_LINEAR_EPILOGUE=$v timeout 100 $B/bench_transformer_timer --model /tmp/moss-pipeline-random/transformer --sizes 1024 --reps 5 > $OUT/ours-$v.jsonl 2> $OUT/ours-$v.err
  python3 -c "
import json
for l in open('$OUT/ours-$v.jsonl'):
    r = json.loads(l)
    if 'median_ms' in r: print('$v', r['kind'], r['size'], r.get('out_hash'), r['median_ms'], r.get('repeat_identical'))"
done
