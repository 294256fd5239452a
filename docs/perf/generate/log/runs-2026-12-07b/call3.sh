#!/bin/bash
# Device call 3 (same warm machine): the attention_fused contract on CUDA, then ncu of the fused attention
# kernel (the diet build) and the timer at 512^2 and 2048^2. As run, in two commands:
set -u
B=$PWD/.carry/rel; export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64
timeout 120 $B/tf-kernel-contract --only attention_fused --backend cuda 2>&1 | grep -E "^SUMMARY|^FAIL|^PASS|missed"
timeout 200 $B/bench_transformer_timer --model /tmp/moss-pipeline-random/transformer --sizes 512,2048 --reps 3 2>/dev/null
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu | head -1)
timeout 240 $NCU --kernel-name-base demangled --kernel-name regex:"attention_fused::attention_kernel" --launch-skip 2 --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  --section InstructionStats --section MemoryWorkloadAnalysis $B/bench_transformer_ops 4196 > $OUT/ncu-attn.txt 2>&1
