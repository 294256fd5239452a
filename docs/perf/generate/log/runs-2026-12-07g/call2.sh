#!/bin/bash
# Session 2026-12-07g, device call 2. .carry/h10/new: a release build of the channel-moments work (v26: the
# convolutions' store warps sum each tile's outputs' moments for the next GroupNorm, TF_CONV_MOMENTS
# epilogue / pass); h10/old/bench_vae_cuda: main 792a472 (before it); h10/fault/test_cuda: store_staged counts
# a quad's positions past the picture's edge into the moments (must go red); h10/v27: v26 plus the few-outputs
# kernel (conv_out) staging through two cp.async chunk buffers (bench_vae_cuda, test_cuda, tf-flux2-vae). Tests, faults, decode A/B
# interleaved (old, new epilogue, new pass, new epilogue + TF_CONV_SUBPIXEL_192=halves), timelines, VAE gate,
# the GroupNorm contract from moments on CUDA.
source bench/device_preamble.sh .carry/h10.tar.xz .carry/h10/new
echo "== tests"; timeout 240 $B/test_cuda --gtest_filter='CudaConv.*:CudaChannelMoments.*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|Failure|^\[==" | head -12
echo "== planted fault: must go red"; timeout 120 $PWD/.carry/h10/fault/test_cuda --gtest_filter='CudaChannelMoments.*' 2>&1 | grep -E "FAILED|PASSED|OK \]" | head -4
echo "== v27 tests"; V=$PWD/.carry/h10/v27; timeout 120 $V/test_cuda --gtest_filter='CudaConv.Few*:CudaChannelMoments.*' 2>&1 | grep -E "FAILED|PASSED|Failure|^\[==" | head -6
echo "== contract"; timeout 120 $B/tf-kernel-contract --only group_norm_moments --backend cuda 2>&1 | tail -4
wait
echo "== decode A/B"
O=$PWD/.carry/h10/old
run() {  # label, env, binary, sizes
  env $2 timeout 60 $3/bench_vae_cuda --model $P/vae --sizes $4 --reps 7 --what decode 2>&1 |
    grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-220
}
run old "X=1" $O 512,1024,2048
run epi "TF_CONV_MOMENTS=epilogue" $B 512,1024,2048
run pass "TF_CONV_MOMENTS=pass" $B 1024
run halves "TF_CONV_SUBPIXEL_192=halves" $B 512,1024,2048
run v27 "X=1" $V 512,1024,2048
for _ in 1 2 3; do
  run v27 "X=1" $V 1024
  run old "X=1" $O 1024; run epi "TF_CONV_MOMENTS=epilogue" $B 1024; run pass "TF_CONV_MOMENTS=pass" $B 1024
  run halves "TF_CONV_SUBPIXEL_192=halves" $B 1024
done
timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 7 --what encode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/new-encode /" | tee -a $OUT/vae.jsonl | cut -c1-200
timeout 60 $O/bench_vae_cuda --model $P/vae --sizes 1024 --reps 7 --what encode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/old-encode /" | tee -a $OUT/vae.jsonl | cut -c1-200
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
for v in epilogue halves v27; do
  [ $v = halves ] && E="TF_CONV_SUBPIXEL_192=halves" || E="X=1"
  X=$B; [ $v = v27 ] && X=$V
  env $E CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels-$v.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
    timeout 60 $X/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
  python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels-$v.csv --eager --last 1 > $OUT/vae-kernels-$v.txt 2>&1
  echo "-- $v"; sed -n 3,24p $OUT/vae-kernels-$v.txt; xz -9 $OUT/vae-kernels-$v.csv
done
echo "== VAE gate 1024^2 (default)"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -1
timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -3
timeout 90 $V/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -1
TF_CONV_SUBPIXEL_192=halves timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -1
rm -f $OUT/vae-case.safetensors
