#!/bin/bash
# Session 2026-12-07f, device call 3 (from the repo root; .carry/h7/new: a release build of main aad45b4, v23 and
# v24 the only paths; h7/old/bench_vae_cuda: call 2's build, run with TF_CONV_RESIDUAL=loaded TF_CONV_192=columns
# = main before v23; h7/faultA/test_cuda: staged_sum leaves the residual out; faultB: the halo kernel reads the
# weights at row 0 for either half; both must go red). Tests, faults, decode old / new interleaved (hashes
# 319a8e4b7e07919a, bc57c21ec1997664, e2918491330be71a), the new timeline, the VAE gate at 1024^2 (the whole picture left out for device time).
source bench/device_preamble.sh .carry/h7.tar.xz .carry/h7/new
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaConv.*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|Failure|^\[==" | head -10
for f in A B; do echo "== planted fault $f: must go red"; timeout 100 $PWD/.carry/h7/fault$f/test_cuda --gtest_filter='CudaConv.TmaKernelGivesTheGatheringKernelsBytes:CudaConv.Halves*' 2>&1 | grep -E "FAILED|PASSED|OK \]" | head -6; done
wait
echo "== decode old / new, interleaved"
O=$PWD/.carry/h7/old
for run in "old 512,1024,2048 decode" "new 512,1024,2048 decode" "old 1024 decode" "new 1024 decode" "old 1024 decode" "new 1024 decode" "old 1024 encode" "new 1024 encode"; do
  set -- $run
  if [ $1 = old ]; then X="env TF_CONV_RESIDUAL=loaded TF_CONV_192=columns $O/bench_vae_cuda"; else X=$B/bench_vae_cuda; fi
  timeout 60 $X --model $P/vae --sizes $2 --reps 7 --what $3 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-200
done
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels-new.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
  timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels-new.csv --eager --last 1 > $OUT/vae-kernels-new.txt 2>&1; sed -n 3,16p $OUT/vae-kernels-new.txt
echo "== VAE gate 1024^2"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -1
timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -2
rm -f $OUT/vae-case.safetensors
