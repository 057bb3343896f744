// Vector kernels for the HNSW index (float, and int8 for quantized indexes), with a
// machine-specific version chosen at run time.
//
// Swift has no per-function target attributes: Swift code built for plain x86-64 runs on SSE
// only, even on a processor with AVX2 and FMA. These kernels are C so that an AVX2 + FMA version
// can be compiled beside a portable one in the same binary and chosen once, at the first call,
// from what the processor reports; where the processor also has AVX-512 VNNI, the int8 kernel
// uses it (the float kernels stay AVX2). On other architectures (arm64, where NEON is the
// baseline) only the portable version is compiled.
//
// All kernels read `count` floats (or bytes) from each of `a` and `b`, with no alignment
// required; `count` may be 0 (the result is then 0 and neither pointer is read).

#ifndef CCELLARSIMD_H
#define CCELLARSIMD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A version of the kernels.
typedef enum CellarSIMDKernel {
    /// Plain C with several independent accumulators, left to the compiler's vectorizer; built
    /// for every architecture.
    CellarSIMDKernelPortable = 0,
    /// AVX2 with fused multiply-add (x86-64 processors that report both).
    CellarSIMDKernelAVX2FMA = 1,
    /// The AVX2 + FMA float kernels, and an AVX-512 VNNI int8 kernel (x86-64 processors that
    /// also report AVX-512 F, BW and VNNI).
    CellarSIMDKernelAVX512VNNI = 2,
} CellarSIMDKernel;

/// Σ a[i]·b[i] over `count` floats, with the kernel version chosen for this processor.
float cellar_simd_dot(const float *a, const float *b, size_t count);

/// Σ (a[i] − b[i])² over `count` floats, with the kernel version chosen for this processor.
float cellar_simd_squared_euclidean(const float *a, const float *b, size_t count);

/// Σ a[i]·b[i] over `count` signed bytes, each in −127…127 (the codes of an int8-quantized
/// vector), summed exactly in 32 bits (`count` up to 2¹⁷ cannot overflow), with the kernel
/// version chosen for this processor.
int32_t cellar_simd_dot_i8(const int8_t *a, const int8_t *b, size_t count);
/// Quantizes `count` floats into `codes` (room for `count`): with s = max|x[i]| / 127, codes[i] =
/// x[i] / s rounded half away from zero (in −127…127); returns s (0 for a zero vector, whose codes
/// are all 0) and stores Σ x[i]² in `squaredLength`. Plain C left to the compiler's vectorizer.
float cellar_simd_quantize_i8(const float *x, size_t count, int8_t *codes, float *squaredLength);
/// Asks the processor to bring the `bytes` bytes at `p` into its caches, one 64-byte line at a
/// time: a hint (it never faults and changes no result), for memory about to be read.
static inline void cellar_simd_prefetch(const void *p, size_t bytes) {
    const char *c = (const char *)p;
    for (size_t offset = 0; offset < bytes; offset += 64) {
        __builtin_prefetch(c + offset, 0, 3);
    }
}

/// The kernel version `cellar_simd_dot` and `cellar_simd_squared_euclidean` use on this
/// processor (chosen at the first call of any of these functions, then fixed).
CellarSIMDKernel cellar_simd_selected_kernel(void);

/// Whether `kernel` is compiled into this binary and runs on this processor.
int cellar_simd_kernel_is_supported(CellarSIMDKernel kernel);

/// `cellar_simd_dot` computed with `kernel`, for tests and measurements; falls back to the
/// portable version when `kernel` is not supported (see `cellar_simd_kernel_is_supported`).
float cellar_simd_dot_with(CellarSIMDKernel kernel, const float *a, const float *b, size_t count);

/// `cellar_simd_squared_euclidean` computed with `kernel`, for tests and measurements; falls
/// back to the portable version when `kernel` is not supported.
float cellar_simd_squared_euclidean_with(CellarSIMDKernel kernel, const float *a, const float *b, size_t count);

/// `cellar_simd_dot_i8` computed with `kernel`, for tests and measurements; falls back to the
/// portable version when `kernel` is not supported.
int32_t cellar_simd_dot_i8_with(CellarSIMDKernel kernel, const int8_t *a, const int8_t *b, size_t count);

#ifdef __cplusplus
}
#endif

#endif
