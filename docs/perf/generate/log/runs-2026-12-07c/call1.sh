#!/bin/bash
# Device call 1 (run from the repo root). base/ is 5ecb924 (last session's main); v11/ adds v10 (o rescaled
# under the next tile's scores, qkv_norm_rope three rows in flight) and v11 (the gated residual add fused
# with the next modulated norm); v12/ adds q, k, v read where the q|k|v product wrote them. v12/'s
# transformer and op tests, bench_transformer_ops 4196 and the timer at 1024^2 interleaved (forward hash
# must stay 04916dd93edef2ca, guidance f0162efe6303eb9c).
source bench/device_preamble.sh .carry/ab7c.tar.xz .carry/ab7c/v12
A=$PWD/.carry/ab7c
echo "== tests (v12)"; timeout 150 $A/v12/test_cuda --gtest_filter='CudaTransformer.*:CudaOps.*' 2>&1 | tee $OUT/test_cuda-1.log | grep -E "FAILED|PASSED|Failure|^\[==" | head -12
echo "== ops (bench_transformer_ops 4196)"
for r in 1 2; do for b in base v11 v12; do echo "-- $b"; timeout 90 $A/$b/bench_transformer_ops 4196 2>&1 | tee -a $OUT/ops-$b.txt | grep -E "rate|attention|qkv_norm_rope|rms_norm|residual|block" | cut -c1-150 | head -20; done; done
wait
echo "== timer 1024^2"
for b in base v12 v11 base v12; do echo "-- $b"; timeout 100 $A/$b/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 5 2>> $OUT/timer.err | tee -a $OUT/timer-$b.jsonl | grep -v '"load"' | cut -c1-250; done
