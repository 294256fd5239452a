#!/bin/bash
# Device call 6 (run from the repo root): Nsight Compute on one 96 -> 96 halo convolution at 1024^2 and one
# 384-channel row-tile convolution, to see what bounds the 96-output layers (tensor pipe, shared memory, stalls).
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=/tmp/moss-pipeline-random
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
for k in "halo_kernel<.int.96, .int.2" "conv_tma_kernel<.bool.0"; do
  f=$OUT/ncu-$(echo "$k" | tr -dc 'a-z0-9').txt
  timeout 200 $NCU --kernel-name-base demangled --kernel-name regex:"$k" --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section Occupancy \
    $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 1 --what decode > $f 2>&1
  echo "== $k"; grep -vE "^==PROF==|^\s*$|^FLUX|^\{|----" $f | grep -vE "^\s+(OPT|INF|WRN)" | head -70
done
