#!/bin/bash
# Device call 3 (run from the repo root): after v18's removal and v19 made the only few-outputs kernel, the
# CUDA tests, the flux2_vae contract and the small decoder's hashes (call 1's pass,picture:
# 512^2 319a8e4b7e07919a, 1024^2 bc57c21ec1997664, 2048^2 e2918491330be71a).
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn $PWD/tests /work/main/tests
P=/tmp/moss-pipeline-random
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || (PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1; echo "made: $(tail -1 $OUT/make.txt)") &
echo "== tests"; timeout 300 $B/test_cuda --gtest_filter='CudaConv.*:CudaAttention.*:CudaOps.*:-CudaConv.SubPixel*' 2>&1 | tee $OUT/test_cuda.log | grep -E "FAILED|PASSED|Failure|^\[==" | head -20
echo "== contract"; timeout 90 $B/tf-kernel-contract --only flux2_vae --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|missed" | cut -c1-160 | head -8
wait
echo "== decode"
for s in 512,1024,2048; do timeout 60 $B/bench_vae_cuda --model $P/vae --sizes $s --reps 5 --what decode 2>&1 | grep -v "^Flux2\|on NVIDIA\|^FLUX" | tee -a $OUT/vae.jsonl; done
[ "${NCU_FEW:-0}" = 1 ] || exit 0
echo "== ncu: conv_few_outputs_kernel (1024^2 conv_out)"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
timeout 150 $NCU --kernel-name-base demangled --kernel-name regex:"conv_few_outputs_kernel" --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats \
  --section SchedulerStats --section Occupancy --section SourceCounters \
  $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 1 --what decode > $OUT/ncu-few.txt 2>&1
grep -vE "^==PROF==|^\s*$|^FLUX|^\{|----" $OUT/ncu-few.txt | grep -vE "^\s+(OPT|INF|WRN)" | head -90
