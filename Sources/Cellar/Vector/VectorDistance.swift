// Vector distances for the HNSW index: the distance types an index can be declared with, and the
// kernels that compute them. The kernels are the hot loop of both building and searching the
// graph.
//
// Two implementations of the dot product and the squared Euclidean distance, the graph's hot
// paths:
// - The Swift kernels (`swiftDot`, `swiftSquaredEuclidean`) walk two buffers of `Float` in
//   `SIMD16<Float>` chunks with two independent accumulators (so that the adds of consecutive
//   chunks do not wait on each other), then finish with a scalar tail for lengths that are not a
//   multiple of 16. Swift has no per-function target attributes, so for plain x86-64 these are
//   compiled for SSE only, whatever the processor running them can do.
// - The C kernels of the CCellarSIMD target: an AVX2 + FMA version compiled beside a portable
//   one, the version chosen once, at the first call, from the features the processor reports
//   (on arm64 only the portable version exists, NEON being the baseline there). The portable
//   version is about as fast as the Swift kernels; the AVX2 one markedly faster.
// `dot` and `squaredEuclidean` call the C kernels from `nativeKernelMinimumCount` floats on and
// the Swift ones below that, where the call into C costs more than the wider vectors save (and
// where the Swift kernel can be inlined). The graph stores its vectors padded with zeros to a
// multiple of 16 floats, so inside the graph the tail is empty; vectors handed in from outside
// may have any length. The Swift kernels stay the reference the tests hold the C ones against.
// A quantized index measures int8 codes with `cellar_simd_dot_i8` instead (HNSWQuantization.swift),
// which has an AVX-512 VNNI version besides the AVX2 and portable ones.
//
// Scores returned (smaller is nearer for every type):
// - `euclidean`: the SQUARED Euclidean distance Σ(aᵢ − bᵢ)², as ObjectBox uses internally and
//   returns. Take the square root for the Euclidean distance; the order is the same.
// - `cosine`: 1 − cos(a, b), in 0…2. A zero vector is treated as orthogonal to everything (1).
// - `dotProduct`: 1 − a·b, in 0…2 for vectors of length 1 (the caller normalizes them; other
//   vectors give scores outside that range, clamped below at 0).
// - `dotProductNonNormalized`: a monotone, non-linear map of the raw dot product d into 0…2:
//   1 / (1 + d) for d ≥ 0 and 2 − 1 / (1 − d) for d < 0. Higher dot products are nearer; an
//   orthogonal pair scores 1; the map is continuous and strictly decreasing in d, so precision
//   is kept over the whole float range.
// - `geo`: the great-circle (haversine) distance in KILOMETRES between two points given as
//   [latitude, longitude] in degrees (only the first two components are read), on a sphere of
//   the Earth's mean radius 6371.0088 km — the same model as Cellar's geo queries.

import CCellarSIMD
import Foundation

/// The distance a vector (HNSW) index orders its neighbours by; the raw values are ObjectBox's
/// names, as written in the model file.
@_spi(Testing) public enum VectorDistanceType: String, Sendable, CaseIterable, Hashable {
    /// Squared Euclidean distance (the default). Scores are squared: take the square root for
    /// the Euclidean distance.
    case euclidean
    /// 1 − cosine similarity, 0 (same direction) … 1 (orthogonal) … 2 (opposite).
    case cosine
    /// 1 − dot product, for vectors normalized to length 1: the same order as `cosine`, cheaper.
    case dotProduct
    /// A non-linear map of the raw dot product into 0…2 (nearest 0, orthogonal 1, farthest 2),
    /// for vectors that are not normalized.
    case dotProductNonNormalized
    /// Haversine distance in kilometres between [latitude, longitude] pairs in degrees.
    case geo
}

/// The distance kernels. All take two buffers of at least `count` floats (for `geo`: at least 2).
@_spi(Testing) public enum VectorDistance {
    /// The Earth's mean radius used by `geo`, in kilometres (the IUGG mean radius).
    @_spi(Testing) public static let earthRadiusKilometers: Float = 6371.0088

    /// The distance of `type` between `a` and `b` over their first `count` components, computed
    /// with the SIMD kernels (cosine normalizes on the fly; the graph instead stores normalized
    /// vectors and uses ``innerProductDistance(_:_:count:)``).
    @_spi(Testing) public static func distance(_ type: VectorDistanceType, _ a: UnsafeBufferPointer<Float>,
                                               _ b: UnsafeBufferPointer<Float>, count: Int) -> Float {
        switch type {
        case .euclidean: return squaredEuclidean(a, b, count: count)
        case .cosine: return cosineDistance(a, b, count: count)
        case .dotProduct: return innerProductDistance(a, b, count: count)
        case .dotProductNonNormalized: return nonNormalizedDotDistance(dot(a, b, count: count))
        case .geo: return geoKilometers(a, b)
        }
    }

    /// From this many floats on, `dot` and `squaredEuclidean` call the C kernels (see the file's
    /// header); below it the Swift ones.
    @_spi(Testing) public static var nativeKernelMinimumCount: Int { 32 }

    /// Σ(aᵢ − bᵢ)² over the first `count` components: the C kernel chosen for this processor
    /// from ``nativeKernelMinimumCount`` floats on, else ``swiftSquaredEuclidean(_:_:count:)``.
    @_spi(Testing) public static func squaredEuclidean(_ a: UnsafeBufferPointer<Float>,
                                                       _ b: UnsafeBufferPointer<Float>, count: Int) -> Float {
        guard count >= nativeKernelMinimumCount, let pa = a.baseAddress, let pb = b.baseAddress else {
            return swiftSquaredEuclidean(a, b, count: count)
        }
        return cellar_simd_squared_euclidean(pa, pb, count)
    }

    /// Σ aᵢ·bᵢ over the first `count` components: the C kernel chosen for this processor from
    /// ``nativeKernelMinimumCount`` floats on, else ``swiftDot(_:_:count:)``.
    @_spi(Testing) public static func dot(_ a: UnsafeBufferPointer<Float>,
                                          _ b: UnsafeBufferPointer<Float>, count: Int) -> Float {
        guard count >= nativeKernelMinimumCount, let pa = a.baseAddress, let pb = b.baseAddress else {
            return swiftDot(a, b, count: count)
        }
        return cellar_simd_dot(pa, pb, count)
    }

    /// Σ(aᵢ − bᵢ)² over the first `count` components, in Swift `SIMD16<Float>` chunks.
    @_spi(Testing) public static func swiftSquaredEuclidean(_ a: UnsafeBufferPointer<Float>,
                                                            _ b: UnsafeBufferPointer<Float>, count: Int) -> Float {
        guard let pa = a.baseAddress, let pb = b.baseAddress else { return 0 }
        let ra = UnsafeRawPointer(pa), rb = UnsafeRawPointer(pb)
        var acc0 = SIMD16<Float>(), acc1 = SIMD16<Float>()
        var i = 0
        while i + 32 <= count {
            let d0 = ra.loadUnaligned(fromByteOffset: i &* 4, as: SIMD16<Float>.self)
                - rb.loadUnaligned(fromByteOffset: i &* 4, as: SIMD16<Float>.self)
            let d1 = ra.loadUnaligned(fromByteOffset: (i &+ 16) &* 4, as: SIMD16<Float>.self)
                - rb.loadUnaligned(fromByteOffset: (i &+ 16) &* 4, as: SIMD16<Float>.self)
            acc0 += d0 * d0
            acc1 += d1 * d1
            i &+= 32
        }
        if i + 16 <= count {
            let d0 = ra.loadUnaligned(fromByteOffset: i &* 4, as: SIMD16<Float>.self)
                - rb.loadUnaligned(fromByteOffset: i &* 4, as: SIMD16<Float>.self)
            acc0 += d0 * d0
            i &+= 16
        }
        var sum = (acc0 + acc1).sum()
        while i < count {
            let d = pa[i] - pb[i]
            sum += d * d
            i &+= 1
        }
        return sum
    }

    /// Σ aᵢ·bᵢ over the first `count` components, in Swift `SIMD16<Float>` chunks.
    @_spi(Testing) public static func swiftDot(_ a: UnsafeBufferPointer<Float>,
                                               _ b: UnsafeBufferPointer<Float>, count: Int) -> Float {
        guard let pa = a.baseAddress, let pb = b.baseAddress else { return 0 }
        let ra = UnsafeRawPointer(pa), rb = UnsafeRawPointer(pb)
        var acc0 = SIMD16<Float>(), acc1 = SIMD16<Float>()
        var i = 0
        while i + 32 <= count {
            acc0 += ra.loadUnaligned(fromByteOffset: i &* 4, as: SIMD16<Float>.self)
                * rb.loadUnaligned(fromByteOffset: i &* 4, as: SIMD16<Float>.self)
            acc1 += ra.loadUnaligned(fromByteOffset: (i &+ 16) &* 4, as: SIMD16<Float>.self)
                * rb.loadUnaligned(fromByteOffset: (i &+ 16) &* 4, as: SIMD16<Float>.self)
            i &+= 32
        }
        if i + 16 <= count {
            acc0 += ra.loadUnaligned(fromByteOffset: i &* 4, as: SIMD16<Float>.self)
                * rb.loadUnaligned(fromByteOffset: i &* 4, as: SIMD16<Float>.self)
            i &+= 16
        }
        var sum = (acc0 + acc1).sum()
        while i < count {
            sum += pa[i] * pb[i]
            i &+= 1
        }
        return sum
    }

    /// max(0, 1 − a·b): the `dotProduct` score (and `cosine` for vectors already normalized).
    @_spi(Testing) public static func innerProductDistance(_ a: UnsafeBufferPointer<Float>,
                                                                      _ b: UnsafeBufferPointer<Float>, count: Int) -> Float {
        max(0, 1 - dot(a, b, count: count))
    }

    /// 1 − a·b / (|a|·|b|), clamped to 0…2; 1 when either vector is zero. Dot product and both
    /// norms are accumulated in one pass.
    @_spi(Testing) public static func cosineDistance(_ a: UnsafeBufferPointer<Float>,
                                                     _ b: UnsafeBufferPointer<Float>, count: Int) -> Float {
        guard let pa = a.baseAddress, let pb = b.baseAddress else { return 1 }
        let ra = UnsafeRawPointer(pa), rb = UnsafeRawPointer(pb)
        var ab = SIMD16<Float>(), aa = SIMD16<Float>(), bb = SIMD16<Float>()
        var i = 0
        while i + 16 <= count {
            let x = ra.loadUnaligned(fromByteOffset: i &* 4, as: SIMD16<Float>.self)
            let y = rb.loadUnaligned(fromByteOffset: i &* 4, as: SIMD16<Float>.self)
            ab += x * y
            aa += x * x
            bb += y * y
            i &+= 16
        }
        var sab = ab.sum(), saa = aa.sum(), sbb = bb.sum()
        while i < count {
            sab += pa[i] * pb[i]
            saa += pa[i] * pa[i]
            sbb += pb[i] * pb[i]
            i &+= 1
        }
        guard saa > 0, sbb > 0 else { return 1 }
        return min(2, max(0, 1 - sab / (saa.squareRoot() * sbb.squareRoot())))
    }

    /// The `dotProductNonNormalized` map of a raw dot product `d`: 1/(1+d) for d ≥ 0, else
    /// 2 − 1/(1−d). Strictly decreasing, continuous, in (0, 2).
    @_spi(Testing) public static func nonNormalizedDotDistance(_ d: Float) -> Float {
        d >= 0 ? 1 / (1 + d) : 2 - 1 / (1 - d)
    }

    /// The haversine distance in kilometres between [latitude, longitude] in degrees, computed in
    /// `Double` (the trigonometry dominates; precision matters near antipodes and for short
    /// distances) and returned as `Float`.
    @_spi(Testing) public static func geoKilometers(_ a: UnsafeBufferPointer<Float>, _ b: UnsafeBufferPointer<Float>) -> Float {
        guard a.count >= 2, b.count >= 2 else { return .infinity }
        let radians = Double.pi / 180
        let lat1 = Double(a[0]) * radians, lat2 = Double(b[0]) * radians
        let dLat = lat2 - lat1, dLon = (Double(b[1]) - Double(a[1])) * radians
        let s1 = sin(dLat / 2), s2 = sin(dLon / 2)
        let h = min(1, max(0, s1 * s1 + cos(lat1) * cos(lat2) * s2 * s2))
        return Float(2 * Double(earthRadiusKilometers) * asin(h.squareRoot()))
    }
}
