// Float vector kernels for the HNSW index, with a machine-specific version chosen at run time.
//
// Swift has no per-function target attributes: Swift code built for plain x86-64 runs on SSE
// only, even on a processor with AVX2 and FMA. These kernels are C so that an AVX2 + FMA version
// can be compiled beside a portable one in the same binary and chosen once, at the first call,
// from what the processor reports. On other architectures (arm64, where NEON is the baseline)
// only the portable version is compiled.
//
// All kernels read `count` floats from each of `a` and `b`, with no alignment required; `count`
// may be 0 (the result is then 0 and neither pointer is read).

#ifndef CCELLARSIMD_H
#define CCELLARSIMD_H

#include <stddef.h>

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
} CellarSIMDKernel;

/// Σ a[i]·b[i] over `count` floats, with the kernel version chosen for this processor.
float cellar_simd_dot(const float *a, const float *b, size_t count);

/// Σ (a[i] − b[i])² over `count` floats, with the kernel version chosen for this processor.
float cellar_simd_squared_euclidean(const float *a, const float *b, size_t count);

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

#ifdef __cplusplus
}
#endif

#endif
