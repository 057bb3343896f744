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

/// Int8 codes: 16 at a time widened to 16-bit lanes, multiplied and added in pairs into 32-bit
/// lanes (`vpmaddwd`), two independent sums; the last 1…15 codes one at a time.
CELLAR_AVX2_FMA int32_t cellar_simd_avx2_dot_i8(const int8_t *a, const int8_t *b, size_t count) {
    __m256i s0 = _mm256_setzero_si256(), s1 = s0;
    size_t i = 0;
    for (; i + 32 <= count; i += 32) {
        __m256i a0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(a + i)));
        __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(b + i)));
        __m256i a1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(a + i + 16)));
        __m256i b1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(b + i + 16)));
        s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(a0, b0));
        s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(a1, b1));
    }
    for (; i + 16 <= count; i += 16) {
        __m256i a0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(a + i)));
        __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(b + i)));
        s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(a0, b0));
    }
    __m256i s = _mm256_add_epi32(s0, s1);
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 3, 2)));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(2, 3, 0, 1)));
    int32_t sum = _mm_cvtsi128_si32(h);
    for (; i < count; i++) {
        sum += (int32_t)a[i] * b[i];
    }
    return sum;
}

#else

/// ISO C wants at least one declaration in a translation unit.
typedef int cellar_simd_avx2_not_built;

#endif
