#!/bin/bash
# Prepared in session 2026-12-07f for the next one (its device time was spent): v25, TF_CONV_SUBPIXEL_192
# columns / halves interleaved in one binary. Needs a release build of main e74d862 or later in .carry/h9/new
# (bench_vae_cuda, test_cuda, libtf_kernel_timeline.so, tf-flux2-vae) and .whl; optional .carry/h9/fault/test_cuda
# built with store_staged_strided's `map.col` taken as 1 (must go red). The bytes must not change (hashes
# 319a8e4b7e07919a, bc57c21ec1997664, e2918491330be71a).
source bench/device_preamble.sh .carry/h9.tar.xz .carry/h9/new
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaConv.*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|Failure|^\[==" | head -10
[ -x $PWD/.carry/h9/fault/test_cuda ] && { echo "== planted fault: must go red"; timeout 100 $PWD/.carry/h9/fault/test_cuda --gtest_filter='CudaConv.SubPixelHalves*' 2>&1 | grep -E "FAILED|PASSED|OK \]" | head -4; }
wait
echo "== decode columns / halves, interleaved"
for run in "columns 512,1024,2048" "halves 512,1024,2048" "columns 1024" "halves 1024" "columns 1024" "halves 1024" "columns 1024" "halves 1024"; do
  set -- $run
  TF_CONV_SUBPIXEL_192=$1 timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $2 --reps 7 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-200
done
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
for v in columns halves; do
  TF_CONV_SUBPIXEL_192=$v CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels-$v.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
    timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
  python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels-$v.csv --eager --last 1 > $OUT/vae-kernels-$v.txt 2>&1; echo "-- $v"; sed -n 3,16p $OUT/vae-kernels-$v.txt
done
