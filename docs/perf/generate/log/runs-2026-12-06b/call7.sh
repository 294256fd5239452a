#!/bin/bash
# Device call 7 (run from the repo root): Nsight Compute's stall sampling by instruction (source page, SASS) for one
# 96 -> 96 halo convolution at 1024^2, read by bench/cuda/ncu_source_stalls.py.
set -u
tar xJf .carry/rel.tar.xz -C .carry
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=/tmp/moss-pipeline-random
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f $P/model_index.json ] || PYTHONPATH=/tmp/site timeout 200 python3 bench/generate_vs_torch/make_pipeline_gpu.py --out $P > $OUT/make.txt 2>&1
NCU=/usr/local/cuda/bin/ncu
timeout 300 $NCU --kernel-name-base demangled --kernel-name regex:"halo_kernel<.int.96, .int.2" --launch-skip 1 --launch-count 1 \
  --set full --import-source no -o /tmp/rep $B/bench_vae_cuda --model $P/vae --sizes 1024 --reps 1 --what decode > $OUT/ncu-run.txt 2>&1
tail -3 $OUT/ncu-run.txt
$NCU --import /tmp/rep.ncu-rep --page source --print-source sass --csv > /tmp/sass.csv 2> $OUT/ncu-import.txt
python3 bench/cuda/ncu_source_stalls.py /tmp/sass.csv --top 30 > $OUT/stalls.txt 2>&1; head -80 $OUT/stalls.txt
$NCU --import /tmp/rep.ncu-rep --page details --section WarpStateStats --section InstructionStats > $OUT/ncu-details.txt 2>&1
grep -E "Stall|stall" $OUT/ncu-details.txt | head -30
