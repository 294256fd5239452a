#pragma once
// Clones per instruction set for a CPU kernel's loops: the arithmetic per element and lane is the same,
// only its width, so every x86 ISA gives the same bytes.
#if defined(__x86_64__) && !defined(__clang__)
#define TF_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TF_VECTOR_CLONES
#endif
