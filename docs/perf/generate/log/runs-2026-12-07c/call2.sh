#!/bin/bash
# Device call 2 (run from the repo root): final/ is 62aca61 (v10 and v12 reverted; v11 for the o product:
# the plain product, then the gated add and norm2 in one pass), base/ 5ecb924. final/'s whole test_cuda and
# the contracts of the kernels it changed; fault/ (final/ with the attention's key mask skipped on every
# tile) must turn the packed-attention tests and the attention_fused contract red; pack_bf16's other
# callers through the small decoder's hashes (expected 512^2 319a8e4b7e07919a, 1024^2 bc57c21ec1997664);
# the timer at 1024^2, base then final; where a guidance step's time goes, kernel by kernel.
source bench/device_preamble.sh .carry/ab7e.tar.xz .carry/ab7e/final
A=$PWD/.carry/ab7e
mkdir -p /work/wt-new /work/wt-base && ln -sfn $PWD/tests /work/wt-new/tests && ln -sfn $PWD/tests /work/wt-base/tests
echo "== tests (final)"; timeout 200 $A/final/test_cuda 2>&1 | tee $OUT/test_cuda-2.log | grep -E "FAILED|PASSED|Failure|^\[==" | head -20
echo "== contracts (final)"; for o in attention_fused residual_add_rms_norm_modulate rms_norm_modulate; do
  timeout 60 $A/final/tf-kernel-contract --only $o --backend cuda 2>&1 | tee -a $OUT/contract.log | grep -E "^SUMMARY|^FAIL|^PASS|missed" | cut -c1-220 | head -4; done
echo "== fault (key mask skipped): must go red"
timeout 90 $A/fault/test_cuda --gtest_filter='CudaTransformer.FlashAttention*:CudaOps.*Attention*:CudaAttention.*' 2>&1 | grep -E "FAILED|PASSED|^\[==" | head -10
timeout 60 $A/fault/tf-kernel-contract --only attention_fused --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|^PASS" | cut -c1-200 | head -3
wait
echo "== decode hashes (final)"; timeout 60 $A/final/bench_vae_cuda --model $P/vae --sizes 512,1024 --reps 5 --what decode 2>&1 | grep out_hash | tee $OUT/vae.jsonl | cut -c1-200
echo "== timer 1024^2"
for b in base final; do echo "-- $b"; timeout 100 $A/$b/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 5 2>> $OUT/timer.err | tee -a $OUT/timer-$b.jsonl | grep -v '"load"' | cut -c1-200; done
echo "== kernel timeline of the guidance steps (final)"
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
CUDA_INJECTION64_PATH=$A/final/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/kernels.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
  timeout 120 $A/final/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 2 > $OUT/timeline-timer.jsonl 2>&1
python3 bench/cuda/kernel_gaps.py $OUT/kernels.csv --last 2 2>&1 | tee $OUT/kernel-gaps.txt | head -50
