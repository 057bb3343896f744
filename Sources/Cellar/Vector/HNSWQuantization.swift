import CCellarSIMD

// Int8 scalar quantization of an HNSW index's vectors: asked for by the index option
// `"quantization": "int8"`, or chosen by the graph to stay within the vector cache bound
// (`vectorCacheHintSizeKB`) when the floats of its vectors would not fit in it — at load (the node
// count known) or when a writer grows the graph past it (`HNSWGraph.grow`). Either way the graph
// is searched and re-scored the same; a graph of codes never turns back into one of floats until
// it is loaded again.
//
// Each vector x, as the graph stores it (padded, normalized for cosine), is kept as codes
// cᵢ = round(xᵢ / s) in −127…127 with a scale of its own, s = max|xᵢ| / 127, and its exact
// squared length |x|². No training and no global statistics: a vector's codes depend on it alone,
// so inserts, removals and a reload give the same codes. Distances from codes:
// - a·b ≈ s_a·s_b·Σ c_a·c_b (the sum exact in 32 bits, `cellar_simd_dot_i8`);
// - euclidean: |a|² + |b|² − 2·a·b (the lengths exact), at least 0;
// - cosine and dotProduct: 1 − a·b, at least 0; dotProductNonNormalized: the map of a·b.
// The codes are padded with zeros to a multiple of 32, the kernel's step.
//
// The graph is built and searched on the codes alone: a quarter of the float bytes per vector,
// and a dot product of bytes is cheaper than one of floats. The approximate distances then only
// choose candidates: a search re-scores the 2·k nearest of its beam (of ef) with the exact float
// vectors, read from the objects' records, and returns the k nearest by exact distance — the
// distances a query returns are exact. Brute force over candidates (a selective condition)
// computes exact distances only. A graph searched without a source of exact vectors (the graph
// alone, as in its unit tests) returns the approximate distances.

/// How an HNSW index keeps its vectors in memory.
@_spi(Testing) public enum HNSWQuantization: String, Sendable, CaseIterable, Hashable {
    /// 32-bit floats, as given.
    case none
    /// One signed byte per dimension, with a scale per vector; the beam re-scored exactly.
    case int8
}

/// A vector to measure distances from, as the graph keeps it: `pointer` addresses its floats,
/// or, in a quantized graph, its codes, with their `scale` and the vector's `squaredLength`.
/// It borrows the memory: valid while the graph (or the buffer it was made from) is unchanged.
struct HNSWProbe {
    let pointer: UnsafeRawPointer
    let scale: Float
    let squaredLength: Float
}

/// A reader of exact vectors for a quantized graph's re-scoring: calls `body` with the stored
/// vector of object `id` (`dimensions` little-endian floats), or does not call it when the
/// object has none in the reader's view.
typealias HNSWExactVectors = (_ id: UInt64, _ body: (UnsafeRawBufferPointer) -> Void) throws -> Void

extension HNSWQuantization {
    /// Codes per vector for `dimensions`: rounded up to the kernel's step of 32.
    static func codesPerVector(dimensions: Int) -> Int { (dimensions + 31) / 32 * 32 }

    /// Writes the codes of the `count` floats at `vector` into `codes` (`codes` has room for
    /// `codeCount` ≥ `count`; the rest is zeroed) and returns the scale and squared length
    /// (`cellar_simd_quantize_i8`).
    static func quantize(_ vector: UnsafePointer<Float>, count: Int, into codes: UnsafeMutablePointer<Int8>,
                         codeCount: Int) -> (scale: Float, squaredLength: Float) {
        var squaredLength: Float = 0
        let scale = cellar_simd_quantize_i8(vector, count, codes, &squaredLength)
        (codes + count).update(repeating: 0, count: codeCount - count)
        return (scale, squaredLength)
    }
}

extension HNSWGraph {
    /// Whether the graph keeps int8 codes instead of floats.
    var isQuantized: Bool { codesPerVector > 0 }

    /// Floats stored per vector: `dimensions`, padded to a multiple of 16 unless the
    /// `vectorCacheSimdPaddingOff` flag says not (and for geo's two).
    static func floatsPerVector(_ parameters: HNSWParameters) -> Int {
        parameters.flags.contains(.vectorCacheSimdPaddingOff) || parameters.distanceType == .geo
            ? parameters.dimensions : (parameters.dimensions + 15) / 16 * 16
    }

    /// Whether an index with `parameters` may keep codes: every distance but geo's.
    static func mayKeepCodes(_ parameters: HNSWParameters) -> Bool { parameters.distanceType != .geo }

    /// Whether a graph of `count` nodes keeps int8 codes: the index asks for them
    /// (`"quantization": "int8"`), or the floats of `count` vectors would take more than the
    /// vector cache bound (`vectorCacheHintSizeKB`).
    @_spi(Testing) public static func keepsCodes(_ parameters: HNSWParameters, count: Int) -> Bool {
        guard mayKeepCodes(parameters) else { return false }
        if parameters.quantization == .int8 { return true }
        let floatBytes = UInt64(floatsPerVector(parameters) * MemoryLayout<Float>.stride)
        let (bytes, overflow) = UInt64(count).multipliedReportingOverflow(by: floatBytes)
        return overflow || bytes > parameters.vectorCacheByteBound
    }

    /// The distance between two quantized vectors (see the file header).
    @inline(__always)
    func quantizedDistance(_ query: HNSWProbe, _ slot: Int32) -> Float {
        let codes = self.codes + Int(slot) * codesPerVector
        let factors = codeFactors + 2 * Int(slot)
        let sum = cellar_simd_dot_i8(query.pointer.assumingMemoryBound(to: Int8.self), codes, codesPerVector)
        let dot = Float(sum) * query.scale * factors[0]
        switch parameters.distanceType {
        case .euclidean: return max(0, query.squaredLength + factors[1] - 2 * dot)
        case .cosine, .dotProduct: return max(0, 1 - dot)
        case .dotProductNonNormalized: return VectorDistance.nonNormalizedDotDistance(dot)
        case .geo: return .infinity   // refused by the parameters
        }
    }

    /// Calls `body` with a probe of the prepared float vector `prepared` (see `prepare`): the
    /// floats themselves, or their codes in a quantized graph.
    func withProbe<R>(_ prepared: [Float], _ body: (HNSWProbe) throws -> R) rethrows -> R {
        try prepared.withUnsafeBufferPointer { floats in
            guard isQuantized else { return try body(HNSWProbe(pointer: UnsafeRawPointer(floats.baseAddress!), scale: 0, squaredLength: 0)) }
            return try withUnsafeTemporaryAllocation(of: Int8.self, capacity: codesPerVector) { codes in
                let (scale, length) = HNSWQuantization.quantize(floats.baseAddress!, count: parameters.dimensions,
                                                               into: codes.baseAddress!, codeCount: codesPerVector)
                return try body(HNSWProbe(pointer: UnsafeRawPointer(codes.baseAddress!), scale: scale, squaredLength: length))
            }
        }
    }

    /// Stores the prepared floats at `prepared` as the vector of `slot`: copied, or quantized.
    func storeVector(_ slot: Int32, prepared: UnsafePointer<Float>) {
        if isQuantized {
            let (scale, length) = HNSWQuantization.quantize(prepared, count: parameters.dimensions,
                                                           into: codes + Int(slot) * codesPerVector, codeCount: codesPerVector)
            codeFactors[2 * Int(slot)] = scale
            codeFactors[2 * Int(slot) + 1] = length
        } else {
            (vectors + Int(slot) * floatsPerVector).update(from: prepared, count: floatsPerVector)
        }
    }

    /// Whether `slot` holds what storing `prepared` would store.
    func holds(_ slot: Int32, prepared: [Float]) -> Bool {
        guard isQuantized else { return Array(vector(slot)) == prepared }
        return withProbe(prepared) { probe in
            let stored = UnsafeRawBufferPointer(start: codes + Int(slot) * codesPerVector, count: codesPerVector)
            return stored.elementsEqual(UnsafeRawBufferPointer(start: probe.pointer, count: codesPerVector))
                && codeFactors[2 * Int(slot)] == probe.scale && codeFactors[2 * Int(slot) + 1] == probe.squaredLength
        }
    }

    /// The exact distance (``VectorDistance/distance(_:_:_:count:)``) between a prepared query
    /// and a stored vector given as `dimensions` little-endian floats (measured in place when
    /// they are aligned floats of this processor; copied into `scratch`, `dimensions` floats,
    /// otherwise); nil when the bytes are not such a vector.
    private func exactDistance(_ query: UnsafeBufferPointer<Float>, littleEndian bytes: UnsafeRawBufferPointer,
                               scratch: UnsafeMutableBufferPointer<Float>) -> Float? {
        let dimensions = parameters.dimensions
        guard bytes.count == dimensions * MemoryLayout<Float>.size, let base = bytes.baseAddress else { return nil }
        let stored: UnsafeBufferPointer<Float>
        #if _endian(little)
        let inPlace = Int(bitPattern: base) % MemoryLayout<Float>.alignment == 0
        #else
        let inPlace = false
        #endif
        if inPlace {
            stored = UnsafeBufferPointer(start: base.assumingMemoryBound(to: Float.self), count: dimensions)
        } else {
            for i in 0..<dimensions { scratch[i] = Float(bitPattern: bytes.loadLE(UInt32.self, at: i &* 4)) }
            stored = UnsafeBufferPointer(start: scratch.baseAddress, count: dimensions)
        }
        return VectorDistance.distance(parameters.distanceType, UnsafeBufferPointer(rebasing: query[..<dimensions]), stored, count: dimensions)
    }

    /// Calls `body` with a measure of the exact distance between the prepared `query` and an
    /// object's stored vector, read by `exact` (nil when it has none).
    func measuringExactly<R>(_ query: [Float], exact: @escaping HNSWExactVectors,
                             _ body: (_ measure: (UInt64) throws -> Float?) throws -> R) throws -> R {
        try query.withUnsafeBufferPointer { q in
            try withUnsafeTemporaryAllocation(of: Float.self, capacity: parameters.dimensions) { scratch in
                try body { id in
                    var distance: Float?
                    try exact(id) { distance = exactDistance(q, littleEndian: $0, scratch: scratch) }
                    return distance
                }
            }
        }
    }

    /// How many of a beam's nearest candidates (by approximate distance) a search re-scores for
    /// `k` results: 2·k. On 384-dimensional sentence embeddings that gave the recall of
    /// re-scoring the whole beam at every width from 16 to 100 (and k alone a recall 0.002–0.004
    /// lower); each re-scored candidate costs a look-up of its record, about a third of a
    /// quantized search's time at 3·k.
    static func rescoredCount(k: Int) -> Int { 2 * k }

    /// The `rescoredCount(k:)` nearest of `found` (approximate distances, ascending) re-scored
    /// with the exact vectors `exact` reads, nearest first, at most `k`; objects it has no
    /// vector for are left out.
    func rescored(_ found: [(distance: Float, slot: Int32)], query: [Float], k: Int,
                  exact: @escaping HNSWExactVectors) throws -> [(id: UInt64, distance: Float)] {
        try measuringExactly(query, exact: exact) { measure in
            let best = found.prefix(Self.rescoredCount(k: k))
            var scored: [(id: UInt64, distance: Float)] = []
            scored.reserveCapacity(best.count)
            for candidate in best {
                let id = ids[Int(candidate.slot)]
                if let d = try measure(id) { scored.append((id, d)) }
            }
            scored.sort { $0.distance < $1.distance || ($0.distance == $1.distance && $0.id < $1.id) }
            return Array(scored.prefix(k))
        }
    }
}
