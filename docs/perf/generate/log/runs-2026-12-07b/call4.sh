#!/bin/bash
# Device call 4 (same warm machine): ours against kohakumoss bf16 eager and torch.compile at 1024^2, one run.
set -u
B=$PWD/.carry/rel; export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64; export PYTHONPATH=/tmp/site
M=/tmp/moss-pipeline-random/transformer; H=bench/transformer_vs_torch
timeout 60 $B/bench_transformer_timer --model $M --sizes 1024 --reps 5 > $OUT/ours.jsonl 2>/dev/null
timeout 420 python3 $H/torch_timer.py --model $M --sizes 1024 --reps 3 --impls eager,compile --compile-budget-s 300 > $OUT/torch.jsonl 2> $OUT/torch.err
python3 $H/report.py $OUT/ours.jsonl $OUT/torch.jsonl
