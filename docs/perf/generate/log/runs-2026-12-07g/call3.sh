#!/bin/bash
# Session 2026-12-07g, device call 3 (calls 1-2 were never started: the device refused). .carry/h11/new: a
# release build of b81691d (v26b channel moments from the store warps without shuffles, TF_CONV_MOMENTS
# epilogue / pass; v27 few-outputs double-buffered; v25 TF_CONV_SUBPIXEL_192); h11/old/bench_vae_cuda: main
# 792a472 (before them); h11/fault/test_cuda: the moments count the positions past the picture (must go red).
source bench/device_preamble.sh .carry/h11.tar.xz .carry/h11/new
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaConv.*:CudaChannelMoments.*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|Failure|^\[==" | head -12
echo "== planted fault: must go red"; timeout 100 $PWD/.carry/h11/fault/test_cuda --gtest_filter='CudaChannelMoments.*' 2>&1 | grep -E "FAILED|PASSED|OK \]" | head -4
wait
echo "== decode A/B"
O=$PWD/.carry/h11/old
run() {  # label, env, binary, sizes
  env $2 timeout 60 $3/bench_vae_cuda --model $P/vae --sizes $4 --reps 5 --what decode 2>&1 |
    grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-220
}
run old "X=1" $O 512,1024,2048
run new "X=1" $B 512,1024,2048
run pass "TF_CONV_MOMENTS=pass" $B 1024
for _ in 1 2; do run old "X=1" $O 1024; run new "X=1" $B 1024; run halves "TF_CONV_SUBPIXEL_192=halves" $B 1024; done
echo "== VAE gate 1024^2 (new, then with halves)"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -1
timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -2
TF_CONV_SUBPIXEL_192=halves timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -2
rm -f $OUT/vae-case.safetensors
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels-new.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
  timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels-new.csv --eager --last 1 > $OUT/vae-kernels-new.txt 2>&1
sed -n 3,26p $OUT/vae-kernels-new.txt; xz -9 $OUT/vae-kernels-new.csv
echo "== contract"; timeout 100 $B/tf-kernel-contract --only group_norm_moments --backend cuda 2>&1 | tail -2
