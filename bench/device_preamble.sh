# Sourced by a device call's script, from the repo root on the GPU machine: unpacks the carried
# archive ($1: .carry/NAME.tar.xz, into .carry/NAME), puts its programs' folder ($2, default the archive's
# folder) first on the library path, links the tests' data where the programs look for it, installs the
# carried wheels into /tmp/site and starts making the random released-geometry pipeline folder in
# $P (/tmp/moss-pipeline-random) in the background (`wait` before using it).
set -u
ARCHIVE=$1
[ -d "${ARCHIVE%.tar.xz}" ] || tar xJf "$ARCHIVE" -C .carry
B=$PWD/${2:-${ARCHIVE%.tar.xz}}
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /work/main && ln -sfn "$PWD/tests" /work/main/tests
P=${P:-/tmp/moss-pipeline-random}
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
[ -f "$P/model_index.json" ] || (PYTHONPATH=/tmp/site timeout 240 python3 bench/generate_vs_torch/make_pipeline_gpu.py \
  --out "$P" > "$OUT/make.txt" 2>&1; echo "made: $(tail -1 "$OUT/make.txt")") &
