// The portable kernel version, built for every architecture: four independent accumulators of
// four floats each (so that consecutive adds do not wait on each other), written with the
// compiler's generic vector type, which becomes SSE on x86-64 and NEON on arm64. Loads go
// through a memcpy, so the buffers need no alignment. Lengths that are not a multiple of 16 are
// finished four floats at a time, then one at a time.

#include "Kernels.h"

/// Four floats in one vector register.
typedef float cellar_float4 __attribute__((vector_size(16)));

static inline cellar_float4 load4(const float *p) {
    cellar_float4 v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

static inline float sum4(cellar_float4 v) {
    return (v[0] + v[1]) + (v[2] + v[3]);
}

float cellar_simd_portable_dot(const float *a, const float *b, size_t count) {
    cellar_float4 s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        s0 += load4(a + i) * load4(b + i);
        s1 += load4(a + i + 4) * load4(b + i + 4);
        s2 += load4(a + i + 8) * load4(b + i + 8);
        s3 += load4(a + i + 12) * load4(b + i + 12);
    }
    for (; i + 4 <= count; i += 4) {
        s0 += load4(a + i) * load4(b + i);
    }
    float sum = sum4((s0 + s1) + (s2 + s3));
    for (; i < count; i++) {
        sum += a[i] * b[i];
    }
    return sum;
}

float cellar_simd_portable_squared_euclidean(const float *a, const float *b, size_t count) {
    cellar_float4 s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        cellar_float4 d0 = load4(a + i) - load4(b + i);
        cellar_float4 d1 = load4(a + i + 4) - load4(b + i + 4);
        cellar_float4 d2 = load4(a + i + 8) - load4(b + i + 8);
        cellar_float4 d3 = load4(a + i + 12) - load4(b + i + 12);
        s0 += d0 * d0;
        s1 += d1 * d1;
        s2 += d2 * d2;
        s3 += d3 * d3;
    }
    for (; i + 4 <= count; i += 4) {
        cellar_float4 d = load4(a + i) - load4(b + i);
        s0 += d * d;
    }
    float sum = sum4((s0 + s1) + (s2 + s3));
    for (; i < count; i++) {
        float d = a[i] - b[i];
        sum += d * d;
    }
    return sum;
}

int32_t cellar_simd_portable_dot_i8(const int8_t *a, const int8_t *b, size_t count) {
    // Four independent sums; products of two codes fit 16 bits, the sums 32.
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        s0 += (int32_t)a[i] * b[i];
        s1 += (int32_t)a[i + 1] * b[i + 1];
        s2 += (int32_t)a[i + 2] * b[i + 2];
        s3 += (int32_t)a[i + 3] * b[i + 3];
    }
    for (; i < count; i++) {
        s0 += (int32_t)a[i] * b[i];
    }
    return (s0 + s1) + (s2 + s3);
}

float cellar_simd_quantize_i8(const float *x, size_t count, int8_t *codes, float *squaredLength) {
    float largest = 0, squares = 0;
    for (size_t i = 0; i < count; i++) {
        float magnitude = x[i] < 0 ? -x[i] : x[i];
        largest = magnitude > largest ? magnitude : largest;
        squares += x[i] * x[i];
    }
    *squaredLength = squares;
    if (!(largest > 0)) {
        for (size_t i = 0; i < count; i++) codes[i] = 0;
        return 0;
    }
    float inverse = 127.0f / largest;
    for (size_t i = 0; i < count; i++) {
        float v = x[i] * inverse;
        v = v > 127.0f ? 127.0f : (v < -127.0f ? -127.0f : v);
        codes[i] = (int8_t)(int32_t)(v + (v >= 0 ? 0.5f : -0.5f));
    }
    return largest / 127.0f;
}
