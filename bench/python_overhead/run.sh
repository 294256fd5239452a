#!/usr/bin/env bash
# bench/python_overhead: one command on the GPU machine. The Python package on CUDA: its tests
# (tests/python/test_cuda.py: CUDA tensors in and out, the caller's stream, memory) and its cost over
# the C++ calls it wraps (overhead.py: a 1024^2 VAE decode and a 75-token prompt).
#   PY_PKG=.carry/py BIN=.carry/rel OUT=$OUT bench/python_overhead/run.sh
# PY_PKG holds tensorfold/ built for this machine's python3 (the release build folder's python/ when
# configured with that Python: the GPU machine's is 3.12); BIN holds bench_python_peer;
# PIPE a pipeline folder (made by make_pipeline_gpu.py when absent); pytest from
# the wheels in WHEELS (.whl: pytest, pluggy, iniconfig).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY_PKG=$(cd "${PY_PKG:?the folder holding tensorfold/}" && pwd)
BIN=$(cd "${BIN:-build/release/bench}" && pwd)
OUT=${OUT:-/tmp/python_overhead}
PIPE=${PIPE:-/tmp/moss-pipeline-random}
WHEELS=${WHEELS:-$ROOT/.whl}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$BIN:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
python3 -m pip install -q --no-index --no-deps --target /tmp/site-pytest "$WHEELS"/pytest-*.whl "$WHEELS"/pluggy-*.whl \
  "$WHEELS"/iniconfig-*.whl
(cd "$ROOT/tests/python" && PYTHONPATH=$PY_PKG:/tmp/site-pytest python3 -m pytest -q -rs -p no:cacheprovider test_cuda.py) |
  tee "$OUT/test_cuda.txt"
[ -f "$PIPE/model_index.json" ] || python3 "$ROOT/bench/generate_vs_torch/make_pipeline_gpu.py" --out "$PIPE"
PYTHONPATH=$PY_PKG python3 "$HERE/overhead.py" --model "$PIPE" --bin "$BIN" --reps "${REPS:-15}" | tee "$OUT/overhead.txt"
