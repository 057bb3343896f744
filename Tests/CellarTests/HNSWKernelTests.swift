// The C distance kernels (CCellarSIMD) against a scalar reference in Double: every kernel version
// this processor runs, called directly, over every length 0…300 from unaligned starts, with NaN
// just before and after each buffer so that a read outside `count` shows; then the dispatch: the
// version it chose, that its entry points give exactly that version's results, and that
// `VectorDistance` takes the C kernels from `nativeKernelMinimumCount` floats on and the Swift
// ones below.

import CCellarSIMD
@_spi(Testing) import Cellar
import CellarTestSupport
import Foundation
import Testing

@Suite struct HNSWKernelTests {
    /// The kernel versions compiled into this binary that this processor runs.
    static let kernels: [CellarSIMDKernel] = [CellarSIMDKernelPortable, CellarSIMDKernelAVX2FMA, CellarSIMDKernelAVX512VNNI]
        .filter { cellar_simd_kernel_is_supported($0) != 0 }

    static let maximumLength = 300

    /// `length` random floats in −2…2 starting `offset` floats into a buffer, with a NaN right
    /// before and right after them.
    struct Guarded {
        var storage: [Float]
        let offset: Int
        let length: Int

        init(length: Int, offset: Int, _ rng: inout SplitMix64) {
            self.offset = offset + 1
            self.length = length
            storage = [Float](repeating: .nan, count: offset + length + 2)
            for i in 0..<length { storage[self.offset + i] = Float.random(in: -2...2, using: &rng) }
        }

        var values: ArraySlice<Float> { storage[offset..<(offset + length)] }

        func withPointer<R>(_ body: (UnsafePointer<Float>) -> R) -> R {
            storage.withUnsafeBufferPointer { body($0.baseAddress! + offset) }
        }
    }

    /// The sum in Double and the sum of the terms' magnitudes (what the rounding error of a
    /// Float sum in any order is bounded by).
    func reference(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>, _ term: (Double, Double) -> Double) -> (sum: Double, scale: Double) {
        var sum = 0.0, scale = 0.0
        for (x, y) in zip(a, b) {
            let t = term(Double(x), Double(y))
            sum += t
            scale += abs(t)
        }
        return (sum, scale)
    }

    func close(_ value: Float, _ expected: (sum: Double, scale: Double)) -> Bool {
        abs(Double(value) - expected.sum) <= 1e-5 * expected.scale + 1e-7
    }

    @Test func everyKernelMatchesTheScalarReference() {
        #expect(Self.kernels.contains(CellarSIMDKernelPortable))
        var rng = SplitMix64(seed: 11)
        for length in 0...Self.maximumLength {
            for offset in 0..<4 {
                let a = Guarded(length: length, offset: offset, &rng)
                let b = Guarded(length: length, offset: (offset * 3 + 1) % 4, &rng)
                let dot = reference(a.values, b.values) { $0 * $1 }
                let l2 = reference(a.values, b.values) { ($0 - $1) * ($0 - $1) }
                a.withPointer { pa in
                    b.withPointer { pb in
                        for kernel in Self.kernels {
                            let d = cellar_simd_dot_with(kernel, pa, pb, length)
                            let e = cellar_simd_squared_euclidean_with(kernel, pa, pb, length)
                            #expect(close(d, dot), "dot, kernel \(kernel.rawValue), length \(length), offset \(offset): \(d) vs \(dot.sum)")
                            #expect(close(e, l2), "l2, kernel \(kernel.rawValue), length \(length), offset \(offset): \(e) vs \(l2.sum)")
                        }
                    }
                }
            }
        }
    }

    @Test func zeroLengthIsZeroWithoutReading() {
        for kernel in Self.kernels {
            #expect(cellar_simd_dot_with(kernel, nil, nil, 0) == 0)
            #expect(cellar_simd_squared_euclidean_with(kernel, nil, nil, 0) == 0)
        }
        #expect(cellar_simd_dot(nil, nil, 0) == 0)
        #expect(cellar_simd_squared_euclidean(nil, nil, 0) == 0)
    }

    @Test func dispatchChoosesTheProcessorsBestKernel() throws {
        let selected = cellar_simd_selected_kernel()
        #expect(Self.kernels.contains(selected))
        #if arch(x86_64) && os(Linux)
        // What the kernel of the operating system says the processor has, read independently.
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = Set(cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }?
            .split(separator: " ").map(String.init) ?? [])
        let avx2 = flags.contains("avx2") && flags.contains("fma")
        let vnni = avx2 && flags.isSuperset(of: ["avx512f", "avx512bw", "avx512_vnni"])
        let expected = vnni ? CellarSIMDKernelAVX512VNNI : avx2 ? CellarSIMDKernelAVX2FMA : CellarSIMDKernelPortable
        #expect(selected == expected)
        #elseif !arch(x86_64)
        #expect(selected == CellarSIMDKernelPortable)
        #endif
    }

    @Test func entryPointsAndVectorDistanceUseTheChosenKernel() {
        let selected = cellar_simd_selected_kernel()
        let threshold = VectorDistance.nativeKernelMinimumCount
        var rng = SplitMix64(seed: 12)
        for length in 0...Self.maximumLength {
            let a = Guarded(length: length, offset: length % 3, &rng)
            let b = Guarded(length: length, offset: length % 2, &rng)
            a.withPointer { pa in
                b.withPointer { pb in
                    let d = cellar_simd_dot(pa, pb, length), e = cellar_simd_squared_euclidean(pa, pb, length)
                    #expect(d.bitPattern == cellar_simd_dot_with(selected, pa, pb, length).bitPattern, "dot, length \(length)")
                    #expect(e.bitPattern == cellar_simd_squared_euclidean_with(selected, pa, pb, length).bitPattern,
                            "l2, length \(length)")
                    let ba = UnsafeBufferPointer(start: pa, count: length), bb = UnsafeBufferPointer(start: pb, count: length)
                    let vd = VectorDistance.dot(ba, bb, count: length)
                    let ve = VectorDistance.squaredEuclidean(ba, bb, count: length)
                    if length >= threshold {
                        #expect(vd.bitPattern == d.bitPattern, "VectorDistance.dot, length \(length)")
                        #expect(ve.bitPattern == e.bitPattern, "VectorDistance.squaredEuclidean, length \(length)")
                    } else {
                        #expect(vd.bitPattern == VectorDistance.swiftDot(ba, bb, count: length).bitPattern)
                        #expect(ve.bitPattern == VectorDistance.swiftSquaredEuclidean(ba, bb, count: length).bitPattern)
                    }
                    #expect(close(vd, reference(a.values, b.values) { $0 * $1 }), "VectorDistance.dot, length \(length)")
                }
            }
        }
    }
}
