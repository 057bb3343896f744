// The AVX-512 VNNI int8 kernel (x86-64 only). The function carries the target attribute, so this
// file builds with the package's ordinary flags, and it is only executed after Dispatch.c has
// seen the processor report AVX-512 F, BW and VNNI.
//
// `vpdpbusd` multiplies unsigned bytes by signed ones and adds each group of four products into
// a 32-bit lane: 64 codes per instruction. The codes of `a` are signed, so they are made unsigned
// by flipping their sign bit (a + 128), and the excess 128·Σb, summed by a second `vpdpbusd` of
// ones against `b`, is taken off at the end. The last 1…63 codes are read with a masked load,
// which never touches memory past `count` and gives zeros (which add nothing) beyond it.

#include "Kernels.h"

#if CELLAR_SIMD_HAS_AVX2

#include <immintrin.h>
#include <stdint.h>

#define CELLAR_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

CELLAR_AVX512_VNNI int32_t cellar_simd_avx512vnni_dot_i8(const int8_t *a, const int8_t *b, size_t count) {
    const __m512i flip = _mm512_set1_epi8((char)0x80), ones = _mm512_set1_epi8(1);
    __m512i products = _mm512_setzero_si512(), excess = products;
    size_t i = 0;
    for (; i + 64 <= count; i += 64) {
        __m512i va = _mm512_loadu_si512((const void *)(a + i));
        __m512i vb = _mm512_loadu_si512((const void *)(b + i));
        products = _mm512_dpbusd_epi32(products, _mm512_xor_si512(va, flip), vb);
        excess = _mm512_dpbusd_epi32(excess, ones, vb);
    }
    if (i < count) {
        __mmask64 mask = _cvtu64_mask64((~0ULL) >> (64 - (count - i)));
        __m512i va = _mm512_maskz_loadu_epi8(mask, (const void *)(a + i));
        __m512i vb = _mm512_maskz_loadu_epi8(mask, (const void *)(b + i));
        products = _mm512_dpbusd_epi32(products, _mm512_xor_si512(va, flip), vb);
        excess = _mm512_dpbusd_epi32(excess, ones, vb);
    }
    return _mm512_reduce_add_epi32(products) - 128 * _mm512_reduce_add_epi32(excess);
}

#else

/// ISO C wants at least one declaration in a translation unit.
typedef int cellar_simd_avx512vnni_not_built;

#endif
