#!/bin/bash
# Device call 5 (run from the repo root): o rescaled under the next tile's scores and qkv_norm_rope with
# three rows a half-warp in flight (rs/, the commit after 8ff7e66) against the diet alone (diet/, 8ff7e66):
# the attention tests and contracts, bench_transformer_ops at 4,196 tokens and the timer at 1024^2
# interleaved (the forward's bytes must stay 04916dd93edef2ca, guidance f0162efe6303eb9c).
source bench/device_preamble.sh .carry/ab.tar.xz .carry/ab/rs
A=$PWD/.carry/ab
echo "== tests"; timeout 200 $A/rs/test_cuda --gtest_filter='CudaOps.*Attention*:CudaOps.*Rope*:CudaTransformer.*' 2>&1 | tee $OUT/test_cuda.log | grep -E "FAILED|PASSED|Failure|Expected|Which is|^\[==" | head -20
echo "== contract"; for o in attention_fused qkv_norm_rope; do timeout 120 $A/rs/tf-kernel-contract --only $o --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|^PASS|missed" | cut -c1-220; done
echo "== attention A/B (bench_transformer_ops 4196)"
for r in 1 2; do for b in diet rs; do echo "-- $b"; timeout 60 $A/$b/bench_transformer_ops 4196 2>&1 | grep -E "rate|attention|qkv_norm_rope|rms_norm" | head -5; done; done
wait
echo "== timer 1024^2: diet, rs"
for b in diet rs; do echo "-- $b"; timeout 100 $A/$b/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 5 2>> $OUT/timer.err | tee -a $OUT/timer-$b.jsonl | grep -v '"load"' | cut -c1-250; done
