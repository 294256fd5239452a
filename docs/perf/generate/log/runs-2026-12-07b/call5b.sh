#!/bin/bash
# Device call 5b: call5.sh trimmed to the device time left: rs/ only against the diet's known numbers
# (attention 349-351 us, forward hash 04916dd93edef2ca), one round each.
source bench/device_preamble.sh .carry/ab.tar.xz .carry/ab/rs
A=$PWD/.carry/ab
timeout 60 $A/rs/test_cuda --gtest_filter='CudaOps.*Attention*:CudaOps.*Rope*:CudaTransformer.Flash*:CudaTransformer.Tiny*' 2>&1 | grep -E "FAILED|PASSED|Failure|^\[==" | head -8
for o in attention_fused qkv_norm_rope; do timeout 40 $A/rs/tf-kernel-contract --only $o --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|^PASS" | cut -c1-200; done
for b in diet rs; do echo "-- $b"; timeout 30 $A/$b/bench_transformer_ops 4196 2>&1 | grep -E "rate|attention|qkv_norm_rope" | head -4; done
wait
timeout 60 $A/rs/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 3 2>/dev/null | grep -v '"load"' | cut -c1-250
