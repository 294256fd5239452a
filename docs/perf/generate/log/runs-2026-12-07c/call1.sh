#!/bin/bash
# Device call 1 (run from the repo root): base/ is 5ecb924 (last session's main); new/ adds v10 (o rescaled
# under the next tile's scores, qkv_norm_rope three rows in flight) and v11 (the gated residual add fused
# with the next modulated norm). new/'s transformer and op tests, then bench_transformer_ops 4196 and the
# timer at 1024^2, base and new interleaved (forward hash must stay 04916dd93edef2ca, guidance
# f0162efe6303eb9c).
source bench/device_preamble.sh .carry/ab7c.tar.xz .carry/ab7c/new
A=$PWD/.carry/ab7c
echo "== tests (new)"; timeout 150 $A/new/test_cuda --gtest_filter='CudaTransformer.*:CudaOps.*' 2>&1 | tee $OUT/test_cuda-1.log | grep -E "FAILED|PASSED|Failure|^\[==" | head -12
echo "== ops A/B (bench_transformer_ops 4196)"
for r in 1 2; do for b in base new; do echo "-- $b"; timeout 90 $A/$b/bench_transformer_ops 4196 2>&1 | tee -a $OUT/ops-$b.txt | grep -E "rate|attention|qkv_norm_rope|rms_norm|residual|block" | cut -c1-150 | head -16; done; done
wait
echo "== timer 1024^2: base, new, base, new"
for b in base new base new; do echo "-- $b"; timeout 100 $A/$b/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 5 2>> $OUT/timer.err | tee -a $OUT/timer-$b.jsonl | grep -v '"load"' | cut -c1-250; done
