#!/bin/bash
# Builds call1.sh's carry in a checkout (.carry/ is ignored, so a fresh checkout has none): a release build's
# programs and the libraries the GPU machine lacks in .carry/h17/new, packed as .carry/h17.tar.xz, and the
# wheels in .whl. Run from the repo root.
set -euo pipefail
cmake --preset release > /dev/null
cmake --build --preset release -j"$(nproc)"
B=build/release N=.carry/h17/new
rm -rf .carry/h17 && mkdir -p $N
cp $B/tests/test_cuda $B/bench/bench_vae_cuda $B/tools/tf-flux2-vae $B/tools/tf-kernel-contract $B/bench/libtf_kernel_timeline.so $N/
for l in libonig.so.5 libutf8proc.so.2 libpng16.so.16; do cp -L "$(ldconfig -p | grep -m1 "$l " | awk '{print $NF}')" $N/; done
tar cJf .carry/h17.tar.xz -C .carry h17
python3 -m pip download -q --no-deps kohakumoss==0.1.0 diffusers==0.42.1 -d .whl
echo "carry: .carry/h17.tar.xz $(du -h .carry/h17.tar.xz | cut -f1)"; echo 'run call1.sh with carry [".carry/h17.tar.xz", ".whl"]'
