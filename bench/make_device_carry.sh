#!/bin/bash
# Builds a device call's carry in a checkout (.carry/ is ignored, so a fresh checkout has none): a release build's
# programs and the libraries the GPU machine lacks in .carry/NAME/new, packed as .carry/NAME.tar.xz, and the wheels
# in .whl. Run from the repo root: bench/make_device_carry.sh NAME; the call sources bench/device_preamble.sh
# .carry/NAME.tar.xz .carry/NAME/new and carries [".carry/NAME.tar.xz", ".whl"].
set -euo pipefail
NAME=${1:?usage: bench/make_device_carry.sh NAME}
cmake --preset release > /dev/null
cmake --build --preset release -j"$(nproc)"
B=build/release N=.carry/$NAME/new
rm -rf ".carry/$NAME" && mkdir -p "$N"
cp $B/tests/test_cuda $B/bench/bench_vae_cuda $B/tools/tf-flux2-vae $B/tools/tf-kernel-contract $B/bench/libtf_kernel_timeline.so "$N"/
for l in libonig.so.5 libutf8proc.so.2 libpng16.so.16; do cp -L "$(ldconfig -p | grep -m1 "$l " | awk '{print $NF}')" "$N"/; done
tar cJf ".carry/$NAME.tar.xz" -C .carry "$NAME"
python3 -m pip download -q --no-deps kohakumoss==0.1.0 diffusers==0.42.1 -d .whl
echo "carry: .carry/$NAME.tar.xz $(du -h ".carry/$NAME.tar.xz" | cut -f1)"
