#!/bin/bash
# Session 2026-12-07f, device call 3 (from the repo root; .carry/h5/new): the transformer at 1024^2 against
# kohakumoss bf16 eager and torch.compile in one run (issue 34's measurement), then the whole picture ours and
# torch eager (issue 35's), on whatever card comes (the reply names it).
source bench/device_preamble.sh .carry/h5.tar.xz .carry/h5/new
wait
export PYTHONPATH=/tmp/site
M=$P/transformer; H=bench/transformer_vs_torch
timeout 60 $B/bench_transformer_timer --model $M --sizes 1024 --reps 7 > $OUT/ours.jsonl 2>/dev/null
timeout 330 python3 $H/torch_timer.py --model $M --sizes 1024 --reps 3 --impls eager,compile --compile-budget-s 240 > $OUT/torch.jsonl 2> $OUT/torch.err
timeout 60 $B/bench_transformer_timer --model $M --sizes 1024 --reps 7 > $OUT/ours-after.jsonl 2>/dev/null
python3 $H/report.py $OUT/ours.jsonl $OUT/torch.jsonl | tee $OUT/report.txt
grep -h median $OUT/ours-after.jsonl | cut -c1-220
