// The AVX2 + FMA kernel version (x86-64 only). Each function carries the target attribute, so
// this file builds with the package's ordinary flags (plain x86-64) and the instructions are
// only executed after Dispatch.c has seen the processor report both features.
//
// Four independent 8-float accumulators (32 floats per step) hide the latency of the fused
// multiply-adds; then 8 floats at a time; the last 1…7 floats are read with a masked load,
// which never touches memory past `count`.

#include "Kernels.h"

#if CELLAR_SIMD_HAS_AVX2

#include <immintrin.h>
#include <stdint.h>

#define CELLAR_AVX2_FMA __attribute__((target("avx2,fma")))

/// Eight ones then eight zeros: the 8 ints from offset 8 − r are the load mask of the first
/// r lanes, for r in 1…7.
static const int32_t tailMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

CELLAR_AVX2_FMA static inline __m256i maskOfFirst(size_t lanes) {
    return _mm256_loadu_si256((const __m256i *)(const void *)(tailMask + 8 - lanes));
}

CELLAR_AVX2_FMA static inline float sum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

CELLAR_AVX2_FMA float cellar_simd_avx2_dot(const float *a, const float *b, size_t count) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    size_t i = 0;
    for (; i + 32 <= count; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= count; i += 8) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    }
    if (i < count) {
        __m256i mask = maskOfFirst(count - i);
        s1 = _mm256_fmadd_ps(_mm256_maskload_ps(a + i, mask), _mm256_maskload_ps(b + i, mask), s1);
    }
    return sum8(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

CELLAR_AVX2_FMA float cellar_simd_avx2_squared_euclidean(const float *a, const float *b, size_t count) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    size_t i = 0;
    for (; i + 32 <= count; i += 32) {
        __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
        __m256 d2 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16));
        __m256 d3 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24));
        s0 = _mm256_fmadd_ps(d0, d0, s0);
        s1 = _mm256_fmadd_ps(d1, d1, s1);
        s2 = _mm256_fmadd_ps(d2, d2, s2);
        s3 = _mm256_fmadd_ps(d3, d3, s3);
    }
    for (; i + 8 <= count; i += 8) {
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        s0 = _mm256_fmadd_ps(d, d, s0);
    }
    if (i < count) {
        __m256i mask = maskOfFirst(count - i);
        __m256 d = _mm256_sub_ps(_mm256_maskload_ps(a + i, mask), _mm256_maskload_ps(b + i, mask));
        s1 = _mm256_fmadd_ps(d, d, s1);
    }
    return sum8(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

#else

/// ISO C wants at least one declaration in a translation unit.
typedef int cellar_simd_avx2_not_built;

#endif
