// The SIMD distance kernels against scalar reference implementations in Double, over lengths
// around the 16-float chunk and 32-float loop boundaries.

@_spi(Testing) import Cellar
import CellarTestSupport
import Foundation
import Testing

@Suite struct HNSWDistanceTests {
    static let lengths = [1, 2, 7, 15, 16, 17, 31, 32, 33, 48, 63, 64, 100, 128, 130]

    func pair(_ length: Int, _ rng: inout SplitMix64) -> ([Float], [Float]) {
        ((0..<length).map { _ in Float.random(in: -2...2, using: &rng) },
         (0..<length).map { _ in Float.random(in: -2...2, using: &rng) })
    }

    func close(_ a: Float, _ b: Double, scale: Double) -> Bool {
        abs(Double(a) - b) <= 1e-5 * max(1, scale)
    }

    @Test func kernelsMatchScalarReferences() {
        var rng = SplitMix64(seed: 7)
        for length in Self.lengths {
            for _ in 0..<20 {
                let (a, b) = pair(length, &rng)
                let x = a.map(Double.init), y = b.map(Double.init)
                let l2 = zip(x, y).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }
                let dot = zip(x, y).reduce(0) { $0 + $1.0 * $1.1 }
                let na = x.reduce(0) { $0 + $1 * $1 }.squareRoot(), nb = y.reduce(0) { $0 + $1 * $1 }.squareRoot()
                let cosine = min(2, max(0, 1 - dot / (na * nb)))
                let scale = x.reduce(0) { $0 + abs($1) } * 4
                a.withUnsafeBufferPointer { pa in
                    b.withUnsafeBufferPointer { pb in
                        #expect(close(VectorDistance.squaredEuclidean(pa, pb, count: length), l2, scale: scale * 4), "l2, length \(length)")
                        #expect(close(VectorDistance.dot(pa, pb, count: length), dot, scale: scale), "dot, length \(length)")
                        #expect(close(VectorDistance.cosineDistance(pa, pb, count: length), cosine, scale: 10), "cosine, length \(length)")
                        #expect(close(VectorDistance.innerProductDistance(pa, pb, count: length), max(0, 1 - dot), scale: scale))
                        let nonNormalized = dot >= 0 ? 1 / (1 + dot) : 2 - 1 / (1 - dot)
                        #expect(close(VectorDistance.distance(.dotProductNonNormalized, pa, pb, count: length), nonNormalized, scale: 10))
                    }
                }
            }
        }
    }

    @Test func cosineOfZeroVectorIsOrthogonalAndSelfIsZero() {
        let zero = [Float](repeating: 0, count: 20), one = (0..<20).map { Float($0) - 7 }
        zero.withUnsafeBufferPointer { z in
            one.withUnsafeBufferPointer { o in
                #expect(VectorDistance.cosineDistance(z, o, count: 20) == 1)
                #expect(VectorDistance.cosineDistance(o, o, count: 20) < 1e-6)
                #expect(VectorDistance.squaredEuclidean(o, o, count: 20) == 0)
            }
        }
    }

    @Test func nonNormalizedDotIsMonotoneWithinZeroToTwo() {
        var previous: Float = 2
        for d in stride(from: Float(-1e6), through: 1e6, by: 997.5) {
            let value = VectorDistance.nonNormalizedDotDistance(d)
            #expect(value > 0 && value < 2 && value <= previous)
            previous = value
        }
        #expect(VectorDistance.nonNormalizedDotDistance(0) == 1)
    }

    @Test func geoIsHaversineInKilometres() {
        func reference(_ a: [Float], _ b: [Float]) -> Double {
            let r = Double.pi / 180
            let (p1, p2) = (Double(a[0]) * r, Double(b[0]) * r)
            let h = pow(sin((p2 - p1) / 2), 2) + cos(p1) * cos(p2) * pow(sin((Double(b[1]) - Double(a[1])) * r / 2), 2)
            return 2 * 6371.0088 * asin(min(1, h.squareRoot()))
        }
        let paris: [Float] = [48.8566, 2.3522], london: [Float] = [51.5074, -0.1278]
        paris.withUnsafeBufferPointer { p in
            london.withUnsafeBufferPointer { l in
                let d = VectorDistance.geoKilometers(p, l)
                #expect(abs(d - 343.6) < 1, "Paris–London \(d) km")
            }
        }
        let points = HNSWTestData.geoPoints(count: 200, seed: 3)
        for (a, b) in zip(points, points.reversed()) {
            a.withUnsafeBufferPointer { pa in
                b.withUnsafeBufferPointer { pb in
                    #expect(abs(Double(VectorDistance.geoKilometers(pa, pb)) - reference(a, b)) < 0.01)
                }
            }
        }
    }
}
