#!/bin/bash
# Device call 3: call2.sh cut to the device time left after refused starts: final/'s op, attention and
# transformer tests and the fused op's contract; fault/ must turn the packed-attention tests and the
# attention_fused contract red; the small decoder's hashes (pack_bf16's other callers; expected 512^2
# 319a8e4b7e07919a, 1024^2 bc57c21ec1997664); one timer run of final/ (hashes 04916dd93edef2ca,
# f0162efe6303eb9c).
source bench/device_preamble.sh .carry/ab7e.tar.xz .carry/ab7e/final
A=$PWD/.carry/ab7e
mkdir -p /work/wt-new && ln -sfn $PWD/tests /work/wt-new/tests
timeout 60 $A/final/test_cuda --gtest_filter='CudaOps.*:CudaTransformer.*:CudaAttention.*' 2>&1 | tee $OUT/test_cuda-3.log | grep -E "FAILED|PASSED|Failure|^\[==" | head -10
timeout 30 $A/final/tf-kernel-contract --only residual_add_rms_norm_modulate --backend cuda 2>&1 | tee $OUT/contract.log | grep -E "^SUMMARY|^FAIL|^PASS" | cut -c1-200 | head -3
echo "== fault"; timeout 40 $A/fault/test_cuda --gtest_filter='CudaTransformer.FlashAttention*:CudaOps.*Attention*:CudaAttention.*' 2>&1 | grep -E "FAILED|PASSED|^\[==" | head -8
timeout 30 $A/fault/tf-kernel-contract --only attention_fused --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|^PASS" | cut -c1-200 | head -3
wait
timeout 40 $A/final/bench_vae_cuda --model $P/vae --sizes 512,1024 --reps 3 --what decode 2>&1 | grep out_hash | tee $OUT/vae.jsonl | cut -c1-160
timeout 60 $A/final/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 3 2>/dev/null | tee $OUT/timer-final.jsonl | grep -v '"load"' | cut -c1-200
