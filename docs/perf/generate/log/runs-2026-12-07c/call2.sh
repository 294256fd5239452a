#!/bin/bash
# Device call 2: v12/'s whole test_cuda and the contracts of the kernels this session changed; fault/ (v12/
# with the attention's key mask skipped on every tile) must turn the packed-attention tests and the
# attention contracts red; pack_bf16's other callers through the small decoder's hashes (expected 512^2
# 319a8e4b7e07919a, 1024^2 bc57c21ec1997664); where a guidance step's time goes, kernel by kernel (CUPTI).
source bench/device_preamble.sh .carry/ab7c.tar.xz .carry/ab7c/v12
A=$PWD/.carry/ab7c
echo "== tests (v12)"; timeout 200 $A/v12/test_cuda 2>&1 | tee $OUT/test_cuda-2.log | grep -E "FAILED|PASSED|Failure|^\[==" | head -20
echo "== contracts (v12)"; for o in attention_fused attention_fused_packed_qkv qkv_norm_rope qkv_norm_rope_in_place residual_add_rms_norm_modulate rms_norm_modulate; do
  timeout 60 $A/v12/tf-kernel-contract --only $o --backend cuda 2>&1 | tee -a $OUT/contract.log | grep -E "^SUMMARY|^FAIL|^PASS|missed" | cut -c1-220 | head -4; done
echo "== fault (key mask skipped): must go red"
timeout 90 $A/fault/test_cuda --gtest_filter='CudaTransformer.FlashAttention*:CudaOps.*Attention*:CudaOps.Packed*:CudaAttention.*' 2>&1 | grep -E "FAILED|PASSED|^\[==" | head -10
for o in attention_fused attention_fused_packed_qkv; do timeout 60 $A/fault/tf-kernel-contract --only $o --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|^PASS" | cut -c1-200 | head -3; done
wait
echo "== decode hashes (v12)"; timeout 60 $A/v12/bench_vae_cuda --model $P/vae --sizes 512,1024 --reps 5 --what decode 2>&1 | grep out_hash | tee $OUT/vae.jsonl | cut -c1-200
echo "== kernel timeline of the guidance steps (v12)"
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
CUDA_INJECTION64_PATH=$A/v12/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/kernels.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
  timeout 120 $A/v12/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 3 > $OUT/timeline-timer.jsonl 2>&1
python3 bench/cuda/kernel_gaps.py $OUT/kernels.csv --last 2 2>&1 | head -60
