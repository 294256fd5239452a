#!/bin/bash
# Device call 1 (run from the repo root): the GroupNorm statistics from the convolutions' store warps
# (channel moments, TF_GROUP_NORM_STATS=epilogue) against each norm's own statistics pass (=pass, the
# default until this call verifies the moments on a GPU), a moments pass after each convolution
# (=moments_pass) and the previous commit's binary (c807f1e; `pass` must give its hashes), interleaved;
# CudaConv / CudaMoments tests (the sub-pixel one left out: 30 s of device time), a planted fault (the
# moments' fourth position dropped), the flux2_vae contract, the kernel timeline, the VAE gate at 1024^2.
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || (PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)") &
echo "== tests"; timeout 150 $B/test_cuda --gtest_filter='CudaConv.*:CudaMoments.*:-CudaConv.SubPixel*' 2>&1 | grep -E "FAILED|PASSED|Failure|Expected|Which is|OK \]|subpixel" | head -40
echo "== planted: moments"; timeout 100 $B/test_cuda_planted_moments --gtest_filter='CudaMoments.Every*' 2>&1 | grep -E "FAILED|PASSED|OK \]|Failure" | head -6
echo "== contract"; timeout 90 $B/tf-kernel-contract --only flux2_vae --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|^PASS|missed" | cut -c1-160 | head -14
wait
echo "== decode: epilogue, pass, old binary"
for run in "epilogue 512,1024,2048" "pass 512,1024,2048" "old 512,1024,2048" "epilogue 1024" "pass 1024" "old 1024"; do
  set -- $run; v=$1
  bin=$B/bench_vae_cuda; [ $v = old ] && bin=$B/bench_vae_cuda_old
  TF_GROUP_NORM_STATS=$v timeout 60 $bin --model $P/vae --sizes $2 --reps 5 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/$v /" | tee -a $OUT/vae.jsonl
done
TF_GROUP_NORM_STATS=epilogue CUDA_INJECTION64_PATH=$B/libtf_kernel_timeline.so TF_TIMELINE_OUT=$OUT/vae-kernels.csv timeout 60 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 3 --what decode > /dev/null 2>&1
python3 bench/cuda/kernel_gaps.py $OUT/vae-kernels.csv --eager --last 1 > $OUT/vae-kernels.txt 2>&1; sed -n 3,24p $OUT/vae-kernels.txt; rm -f $OUT/vae-kernels.csv
echo "== VAE gate 1024^2"
PYTHONPATH=/tmp/site timeout 200 python3 python/cases/flux2_vae_case.py vae --model $P/vae --height 1024 --width 1024 \
  --ref-device cuda --bf16-device cuda --out $OUT/vae-case.safetensors 2>&1 | tail -2
for v in epilogue pass; do echo "TF_GROUP_NORM_STATS=$v"; TF_GROUP_NORM_STATS=$v timeout 90 $B/tf-flux2-vae check --model $P/vae --case $OUT/vae-case.safetensors --device cuda 2>&1 | tail -8; done
rm -f $OUT/vae-case.safetensors
echo "== decode: moments_pass"
TF_GROUP_NORM_STATS=moments_pass timeout 30 $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 5 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | sed "s/^/moments_pass /" | tee -a $OUT/vae.jsonl
