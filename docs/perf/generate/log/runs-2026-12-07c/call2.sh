#!/bin/bash
# Device call 2: new/'s whole test_cuda and the contracts of the kernels it changed; fault/ (new/ with the
# attention's key mask forced off on every tile) must turn the packed-attention tests and the
# attention_fused contract red; pack_bf16's other callers through the small decoder's hashes (expected
# 512^2 319a8e4b7e07919a, 1024^2 bc57c21ec1997664).
source bench/device_preamble.sh .carry/ab7c.tar.xz .carry/ab7c/new
A=$PWD/.carry/ab7c
echo "== tests (new)"; timeout 240 $A/new/test_cuda 2>&1 | tee $OUT/test_cuda-2.log | grep -E "FAILED|PASSED|Failure|^\[==" | head -20
echo "== contracts (new)"; for o in attention_fused qkv_norm_rope residual_add_rms_norm_modulate rms_norm_modulate; do
  timeout 90 $A/new/tf-kernel-contract --only $o --backend cuda 2>&1 | tee -a $OUT/contract.log | grep -E "^SUMMARY|^FAIL|missed" | cut -c1-200 | head -6; done
echo "== fault (key mask off): must go red"
timeout 90 $A/fault/test_cuda --gtest_filter='CudaTransformer.FlashAttention*:CudaOps.*Attention*:CudaAttention.*' 2>&1 | grep -E "FAILED|PASSED|^\[==" | head -8
timeout 90 $A/fault/tf-kernel-contract --only attention_fused --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL" | cut -c1-200 | head -4
wait
echo "== decode hashes (new)"; timeout 60 $A/new/bench_vae_cuda --model $P/vae --sizes 512,1024 --reps 5 --what decode 2>&1 | grep out_hash | tee $OUT/vae.jsonl | cut -c1-200
