#!/bin/bash
# Device call 1 (run from the repo root): GroupNorm statistics from the convolutions' store warps
# (TF_GROUP_NORM_STATS=epilogue) and conv_out staged from the picture itself (TF_CONV_FEW_OUTPUTS=picture)
# against the previous defaults (pass, split: their 1024^2 hash must be 153561c48ce6550f), interleaved;
# CudaConv / CudaMoments tests; three planted faults (each must turn its test red); the flux2_vae contract;
# the kernel timeline; the VAE gate at 1024^2 for the candidate.
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || (PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)") &
echo "== tests"; timeout 200 $B/test_cuda --gtest_filter='CudaConv.*:CudaMoments.*' 2>&1 | grep -E "FAILED|PASSED|Failure|Expected|Which is|OK \]|subpixel" | head -40
echo "== planted: moments (the store warps' fourth value left out)"; timeout 100 $B/test_cuda_planted_tma --gtest_filter='CudaMoments.Every*' 2>&1 | grep -E "FAILED|PASSED|OK \]" | head -4
echo "== planted: sub-pixel (the one-product taps dropped)"; timeout 100 $B/test_cuda_planted_tma --gtest_filter='CudaConv.SubPixel*' 2>&1 | grep -E "FAILED|PASSED|OK \]" | head -4
echo "== planted: few outputs (the staged values' lo dropped)"; timeout 100 $B/test_cuda_planted_few --gtest_filter='CudaConv.FewOutputs*' 2>&1 | grep -E "FAILED|PASSED|OK \]|Expected|Which is" | head -8
timeout 90 $B/tf-kernel-contract_planted_few --only conv2d --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|missed" | cut -c1-160 | head -6
echo "== contract"; timeout 90 $B/tf-kernel-contract --only flux2_vae --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|^PASS|missed" | cut -c1-160 | head -14
wait
echo "== decode: stats/few-outputs variants, interleaved"
for run in "pass,split 512,1024,2048" "epilogue,split 512,1024,2048" "epilogue,picture 512,1024,2048" "pass,picture 512,1024,2048" \
           "pass,split 1024" "epilogue,split 1024" "epilogue,picture 1024" "pass,picture 1024"; do
  set -- $run; v=$1
  TF_GROUP_NORM_STATS=${v%,*} TF_CONV_FEW_OUTPUTS=${v#*,} timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $2 --reps 5 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$v /" | tee -a $OUT/vae.jsonl
done
TF_GROUP_NORM_STATS=epilogue CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 3 --what decode > /dev/null 2>&1
python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels.txt 2>&1; sed -n 3,26p $OUT/vae-kernels.txt; rm -f $OUT/vae-kernels.csv
echo "== VAE gate 1024^2 (epilogue, picture)"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -2
TF_GROUP_NORM_STATS=epilogue timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -8
rm -f $OUT/vae-case.safetensors
