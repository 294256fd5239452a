#!/bin/bash
# Device call 5 (run from the repo root; meant for an H200): the whole picture against torch eager
# (call2.sh's generate part), the transformer timer, the Python package's tests and overhead.
set -u
PART=gen bash docs/perf/generate/log/runs-2026-12-05c/call2.sh
B=$PWD/.carry/rel
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=/tmp/moss-pipeline-random
echo "== transformer timer"
timeout 150 $B/bench_transformer_timer --model $P/transformer --sizes 1024 --reps 5 > $OUT/ours.jsonl 2> $OUT/ours.err
python3 -c "
import json
for l in open('$OUT/ours.jsonl'):
    r = json.loads(l)
    if 'median_ms' in r: print(r['kind'], r['size'], r.get('out_hash'), r['median_ms'], r.get('repeat_identical'))"
echo "== python"
PY_PKG=.carry/py BIN=$B OUT=$OUT/py PIPE=$P timeout 200 bench/python_overhead/run.sh 2>&1 | tail -6
