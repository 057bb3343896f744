// The public entry points of CCellarSIMD: the kernel version is chosen once, at the first call,
// from what the processor reports (`__builtin_cpu_supports`), and kept in an atomic so that
// concurrent first calls are safe (they all choose the same). Each call then branches on it, a
// branch the processor predicts every time.

#include "CCellarSIMD.h"
#include "Kernels.h"

#include <stdatomic.h>

/// The chosen CellarSIMDKernel, or −1 before the first call.
static atomic_int selectedKernel = -1;

static CellarSIMDKernel detectKernel(void) {
#if CELLAR_SIMD_HAS_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni")) {
            return CellarSIMDKernelAVX512VNNI;
        }
        return CellarSIMDKernelAVX2FMA;
    }
#endif
    return CellarSIMDKernelPortable;
}

static inline CellarSIMDKernel currentKernel(void) {
    int kernel = atomic_load_explicit(&selectedKernel, memory_order_relaxed);
    if (__builtin_expect(kernel < 0, 0)) {
        CellarSIMDKernel detected = detectKernel();
        kernel = (int)detected;
        atomic_store_explicit(&selectedKernel, kernel, memory_order_relaxed);
    }
    return (CellarSIMDKernel)kernel;
}

CellarSIMDKernel cellar_simd_selected_kernel(void) {
    return currentKernel();
}

int cellar_simd_kernel_is_supported(CellarSIMDKernel kernel) {
    switch (kernel) {
    case CellarSIMDKernelPortable:
        return 1;
    case CellarSIMDKernelAVX2FMA:
        return currentKernel() != CellarSIMDKernelPortable;
    case CellarSIMDKernelAVX512VNNI:
        return currentKernel() == CellarSIMDKernelAVX512VNNI;
    }
    return 0;
}

float cellar_simd_dot_with(CellarSIMDKernel kernel, const float *a, const float *b, size_t count) {
#if CELLAR_SIMD_HAS_AVX2
    if (kernel != CellarSIMDKernelPortable && cellar_simd_kernel_is_supported(kernel)) {
        return cellar_simd_avx2_dot(a, b, count);
    }
#else
    (void)kernel;
#endif
    return cellar_simd_portable_dot(a, b, count);
}

float cellar_simd_squared_euclidean_with(CellarSIMDKernel kernel, const float *a, const float *b, size_t count) {
#if CELLAR_SIMD_HAS_AVX2
    if (kernel != CellarSIMDKernelPortable && cellar_simd_kernel_is_supported(kernel)) {
        return cellar_simd_avx2_squared_euclidean(a, b, count);
    }
#else
    (void)kernel;
#endif
    return cellar_simd_portable_squared_euclidean(a, b, count);
}

float cellar_simd_dot(const float *a, const float *b, size_t count) {
#if CELLAR_SIMD_HAS_AVX2
    if (currentKernel() != CellarSIMDKernelPortable) {
        return cellar_simd_avx2_dot(a, b, count);
    }
#endif
    return cellar_simd_portable_dot(a, b, count);
}

float cellar_simd_squared_euclidean(const float *a, const float *b, size_t count) {
#if CELLAR_SIMD_HAS_AVX2
    if (currentKernel() != CellarSIMDKernelPortable) {
        return cellar_simd_avx2_squared_euclidean(a, b, count);
    }
#endif
    return cellar_simd_portable_squared_euclidean(a, b, count);
}

int32_t cellar_simd_dot_i8_with(CellarSIMDKernel kernel, const int8_t *a, const int8_t *b, size_t count) {
#if CELLAR_SIMD_HAS_AVX2
    if (kernel == CellarSIMDKernelAVX512VNNI && cellar_simd_kernel_is_supported(kernel)) {
        return cellar_simd_avx512vnni_dot_i8(a, b, count);
    }
    if (kernel != CellarSIMDKernelPortable && cellar_simd_kernel_is_supported(kernel)) {
        return cellar_simd_avx2_dot_i8(a, b, count);
    }
#else
    (void)kernel;
#endif
    return cellar_simd_portable_dot_i8(a, b, count);
}

int32_t cellar_simd_dot_i8(const int8_t *a, const int8_t *b, size_t count) {
#if CELLAR_SIMD_HAS_AVX2
    CellarSIMDKernel kernel = currentKernel();
    if (kernel == CellarSIMDKernelAVX512VNNI) {
        return cellar_simd_avx512vnni_dot_i8(a, b, count);
    }
    if (kernel == CellarSIMDKernelAVX2FMA) {
        return cellar_simd_avx2_dot_i8(a, b, count);
    }
#endif
    return cellar_simd_portable_dot_i8(a, b, count);
}
