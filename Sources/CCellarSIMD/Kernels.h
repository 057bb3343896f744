// The kernel versions behind the dispatch in Dispatch.c: declarations shared by the C files of
// this target only (not part of the public header).

#ifndef CELLAR_SIMD_KERNELS_H
#define CELLAR_SIMD_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/// 1 where the AVX2 + FMA version is compiled (x86-64 with a compiler that has per-function
/// target attributes: clang and GCC), else 0.
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define CELLAR_SIMD_HAS_AVX2 1
#else
#define CELLAR_SIMD_HAS_AVX2 0
#endif

#define CELLAR_SIMD_INTERNAL __attribute__((visibility("hidden")))

/// Portable.c: every architecture.
CELLAR_SIMD_INTERNAL float cellar_simd_portable_dot(const float *a, const float *b, size_t count);
CELLAR_SIMD_INTERNAL float cellar_simd_portable_squared_euclidean(const float *a, const float *b, size_t count);
CELLAR_SIMD_INTERNAL int32_t cellar_simd_portable_dot_i8(const int8_t *a, const int8_t *b, size_t count);

#if CELLAR_SIMD_HAS_AVX2
/// AVX2FMA.c: only to be called once the processor has reported AVX2 and FMA.
CELLAR_SIMD_INTERNAL float cellar_simd_avx2_dot(const float *a, const float *b, size_t count);
CELLAR_SIMD_INTERNAL float cellar_simd_avx2_squared_euclidean(const float *a, const float *b, size_t count);
CELLAR_SIMD_INTERNAL int32_t cellar_simd_avx2_dot_i8(const int8_t *a, const int8_t *b, size_t count);
/// AVX512VNNI.c: only to be called once the processor has reported AVX-512 F, BW and VNNI.
CELLAR_SIMD_INTERNAL int32_t cellar_simd_avx512vnni_dot_i8(const int8_t *a, const int8_t *b, size_t count);
#endif

#endif
