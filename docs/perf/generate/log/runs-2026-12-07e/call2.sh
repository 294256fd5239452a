#!/bin/bash
# Session 2026-12-07e, device call 2 (run from the repo root). new/: v21b, the store warps' row moments as lane
# partials staged in the row's own floats, then a lane a row adds 32 pairs (call 1's v21 wrote the outputs back
# and summed 128 values a lane); TF_GROUP_NORM_STATS=epilogue against pass (1024^2 hash bc57c21ec1997664),
# interleaved. Tests, the planted fault (the odd lanes' partials left out: must go red), the contracts, the
# kernel timelines, the VAE gate at 1024^2 with epilogue, the whole picture (ours, both; the tools' libraries
# carried: call 1's generate runs found no libutf8proc).
source bench/device_preamble.sh .carry/h2.tar.xz .carry/h2/new
mkdir -p /work/wt-new && ln -sfn $PWD/tests /work/wt-new/tests
wait
echo "== decode: pass / epilogue, interleaved"
for run in "pass 512,1024,2048" "epilogue 512,1024,2048" "pass 1024" "epilogue 1024" "pass 1024" "epilogue 1024" "pass 1024" "epilogue 1024"; do
  set -- $run
  TF_GROUP_NORM_STATS=$1 timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $2 --reps 5 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$1 /" | tee -a $OUT/vae.jsonl | cut -c1-250
done
CUPTI=$(dirname "$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2>/dev/null | head -1)")
for v in pass epilogue; do
  TF_GROUP_NORM_STATS=$v CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels-$v.csv LD_LIBRARY_PATH=$CUPTI:$LD_LIBRARY_PATH \
    timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 2 --what decode > /dev/null 2>&1
  python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels-$v.csv --eager --last 1 > $OUT/vae-kernels-$v.txt 2>&1; echo "-- $v"; sed -n 3,24p $OUT/vae-kernels-$v.txt; rm -f $OUT/vae-kernels-$v.csv
done
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaConv.*:CudaMoments.*:CudaFlux2*:CudaVae*' 2>&1 | tee $OUT/test_cuda.log | grep -E "FAILED|PASSED|Failure|Expected|Which is|^\[==" | head -30
echo "== planted (odd lanes' partials left out): must go red"; timeout 100 $PWD/.carry/h2/fault/test_cuda --gtest_filter='CudaMoments.*' 2>&1 | grep -E "FAILED|PASSED|OK \]" | head -6
echo "== contracts"; for o in channel_moments conv2d conv2d_moments flux2_vae; do timeout 90 $B/tf-kernel-contract --only $o --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|missed" | cut -c1-160 | head -4; done
echo "== VAE gate 1024^2 (epilogue)"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -2
TF_GROUP_NORM_STATS=epilogue timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -8
rm -f $OUT/vae-case.safetensors
echo "== whole picture (ours): epilogue, pass"
for v in epilogue pass; do TF_GROUP_NORM_STATS=$v BIN=$B OUT=$OUT/generate-$v SKIP_TORCH=1 SKIP_COMPILE=1 SKIP_BIG=1 REPS=2 \
  timeout 120 bench/generate_vs_torch/run.sh 2>&1 | grep -iE "total|picture|ours" | tail -4; done
