#!/bin/bash
# Device call 3 (prepared in session 2026-12-07e, not run there: the session's device time was spent; run it
# from the repo root with a release build of the commit that adds TF_CONV_RESIDUAL_PREFETCH in .carry/h3/new:
# bench_vae_cuda, test_cuda, libtf_kernel_timeline.so). v22: the store warps' residual asked into L2 a tile
# ahead; `none` against `l2` interleaved in one binary; the bytes must not change (hashes 319a8e4b7e07919a,
# bc57c21ec1997664, e2918491330be71a); CudaConv tests; both kernel timelines at 1024^2. Optional .carry/h3/diag:
# bench_vae_cuda + libtf_kernel_timeline.so built with `return;` as store_staged's first line (outputs left
# unwritten, never committed): the kernels' time without their store warps' work, i.e. whether those warps
# or the MMAs set a tile's time (v21 / v21b suggest the warps).
source bench/device_preamble.sh .carry/h3.tar.xz .carry/h3/new
echo "== tests"; timeout 150 $B/test_cuda --gtest_filter='CudaConv.*' 2>&1 | grep -E "FAILED|PASSED|Failure|^\[==" | head -10
wait
echo "== decode none / l2, interleaved"
for run in "none 512,1024,2048" "l2 512,1024,2048" "none 1024" "l2 1024" "none 1024" "l2 1024" "none 1024" "l2 1024"; do
  set -- $run
  TF_CONV_RESIDUAL_PREFETCH=$1 timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $2 --reps 7 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-200
done
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
for v in none l2; do
  TF_CONV_RESIDUAL_PREFETCH=$v CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
    timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
  python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels-$v.txt 2>&1; echo "-- $v"; sed -n 3,12p $OUT/vae-kernels-$v.txt
  mv $OUT/vae-kernels.csv $OUT/vae-kernels-$v.csv
done
if [ -x $PWD/.carry/h3/diag/bench_vae_cuda ]; then
  D=$PWD/.carry/h3/diag
  CUDA_INJECTION64_PATH=$D/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv LD_LIBRARY_PATH=$D:$CUPTI:$LD_LIBRARY_PATH \
    timeout 60 $D/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
  python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels-diag.txt 2>&1; echo "-- diag (no stores)"; sed -n 3,12p $OUT/vae-kernels-diag.txt
fi
