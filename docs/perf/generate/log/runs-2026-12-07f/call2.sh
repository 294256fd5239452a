#!/bin/bash
# Session 2026-12-07f, device call 2 (from the repo root; .carry/h6/new: a release build of main with v23 and v24;
# .carry/h6/faultA/test_cuda: staged_sum leaving the residual out; faultB: the 96-output kernels' weights read
# at row 0 for either half; both must go red). Four builds' worth of switches in one binary, interleaved:
# base (TF_CONV_RESIDUAL=loaded TF_CONV_192=columns), v23 (staged), v24 (halves), both; the bytes must not
# change (hashes 319a8e4b7e07919a, bc57c21ec1997664, e2918491330be71a); CudaConv tests; kernel timelines (CSVs
# kept); the VAE gate at 1024^2 with both (the contracts and the whole picture left out for device time).
source bench/device_preamble.sh .carry/h6.tar.xz .carry/h6/new
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaConv.*' 2>&1 | tee $OUT/test_cuda.txt | grep -E "FAILED|PASSED|Failure|^\[==" | head -10
for f in A B; do echo "== planted fault $f: must go red"; timeout 100 $PWD/.carry/h6/fault$f/test_cuda --gtest_filter='CudaConv.StagedResidual*:CudaConv.Halves*' 2>&1 | grep -E "FAILED|PASSED|OK \]" | head -6; done
wait
declare -A ENV=([base]="TF_CONV_RESIDUAL=loaded TF_CONV_192=columns" [staged]="TF_CONV_RESIDUAL=staged TF_CONV_192=columns" \
  [halves]="TF_CONV_RESIDUAL=loaded TF_CONV_192=halves" [both]="TF_CONV_RESIDUAL=staged TF_CONV_192=halves")
echo "== decode, interleaved"
for run in "base 512,1024,2048" "both 512,1024,2048" "staged 1024" "halves 1024" "base 1024" "both 1024" "staged 1024" "halves 1024" "base 1024" "both 1024" "base 1024" "both 1024"; do
  set -- $run
  env ${ENV[$1]} timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $2 --reps 7 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-200
done
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
for v in base both; do
  env ${ENV[$v]} CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
    timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
  python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels-$v.txt 2>&1; echo "-- $v"; sed -n 3,16p $OUT/vae-kernels-$v.txt
  mv $OUT/vae-kernels.csv $OUT/vae-kernels-$v.csv
done
echo "== VAE gate 1024^2 (both)"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -1
env ${ENV[both]} timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -2
rm -f $OUT/vae-case.safetensors
