@_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// The cell scheme: ids, and coverings that hold the cell of every point a shape contains.
@Suite struct GeoCellsTests {
    private func point(_ latitude: Double, _ longitude: Double) -> GeoPoint {
        GeoPoint(uncheckedLatitude: latitude, longitude: longitude)
    }

    private func covers(_ ranges: [ClosedRange<UInt64>], _ id: UInt64) -> Bool {
        var low = 0, high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if ranges[mid].upperBound < id { low = mid + 1 } else { high = mid }
        }
        return low < ranges.count && ranges[low].contains(id)
    }

    private func checkWellFormed(_ ranges: [ClosedRange<UInt64>], maxRanges: Int, _ comment: String) {
        #expect(!ranges.isEmpty && ranges.count <= maxRanges, "\(comment)")
        for k in ranges.indices.dropFirst() { #expect(ranges[k - 1].upperBound + 1 < ranges[k].lowerBound, "\(comment)") }
        #expect(ranges.allSatisfy { $0.upperBound <= GeoCells.allCells.upperBound }, "\(comment)")
    }

    @Test func cellIds() {
        // Every longitude names the same pole; -180 and 180 the same meridian.
        #expect(GeoCells.cell(of: point(90, 0)) == GeoCells.cell(of: point(90, 137)))
        #expect(GeoCells.cell(of: point(-90, -180)) == GeoCells.cell(of: point(-90, 45)))
        #expect(GeoCells.cell(of: point(12.5, 180)) == GeoCells.cell(of: point(12.5, -180)))
        #expect(GeoCells.cell(of: point(0, 0)) >> 60 == 0)
        #expect(GeoCells.cell(of: point(90, 0)) >> 60 == 2)
        #expect(GeoCells.cell(of: point(-90, 0)) >> 60 == 5)
        #expect(GeoCells.cell(of: point(0, 180)) >> 60 == 3)
        // Nearby points share high bits; points a few cm apart differ.
        let a = GeoCells.cell(of: point(45, 45)), b = GeoCells.cell(of: point(45, 45.0000005))
        #expect(a != b && (a ^ b) < 1 << 8)
        // Each level-30 cell is inside the cap of its ancestors.
        var random = GeoRandom(seed: 7)
        for _ in 0..<1_000 {
            let p = random.point(), id = GeoCells.cell(of: p)
            #expect(GeoCells.allCells.contains(id))
            let face = Int(id >> 60)
            var i: UInt64 = 0, j: UInt64 = 0
            for bit in stride(from: 29, through: 0, by: -1) {
                i = i << 1 | (id >> (2 * UInt64(bit) + 1)) & 1
                j = j << 1 | (id >> (2 * UInt64(bit))) & 1
            }
            for level in [0, 5, 17, 30] {
                let cell = GeoCells.Cell(face: face, level: level, i: i >> UInt64(30 - level), j: j >> UInt64(30 - level))
                #expect(cell.range.contains(id))
                let cap = cell.cap
                #expect(cap.center.angle(to: p.vector) <= cap.radius, "\(p) level \(level)")
            }
        }
    }

    /// The essential property, for thousands of random shapes and points near and far.
    @Test func coveringsHoldEveryContainedPoint() throws {
        let seed = SplitMix64.testSeed()
        var random = GeoRandom(seed: seed)
        var contained = 0
        for round in 0..<1_500 {
            let shape: any GeoShape
            let near: GeoPoint, spread: Double
            switch round % 3 {
            case 0:
                let kind = round % 4
                let center = kind == 0 ? point(random.double(85...90) * (round % 2 == 0 ? 1 : -1), random.double(-180...180))
                    : kind == 1 ? point(random.double(-60...60), random.double(178...180)) : random.point()
                let radius = [1 / 6_371_008.8, 1 / 6371.0088, random.double(0.001...0.1), random.double(0.5...3.0)][random.int(0...3)]
                shape = try GeoCircle(center: center, radius: .radians(radius))
                (near, spread) = (center, radius * 1.2)
            case 1:
                let a = random.double(-90...90), b = random.double(-90...90)
                let size = [0.001, 1.0, 30.0, 360.0][random.int(0...3)]
                let west = random.double(-180...180), east = west + random.double(0...size)
                let box = try GeoBox(bottomLeft: point(min(a, b), west),
                                     topRight: point(max(a, b), east > 180 ? east - 360 : east))
                shape = box
                (near, spread) = (point((a + b) / 2, west), 2.0)
            default:
                let center = [random.point(), point(random.double(80...90), random.double(-180...180)), point(0, 180)][random.int(0...2)]
                let size = [0.00001, 0.01, 0.5][random.int(0...2)]
                let outer = GeoTestMath.starRing(center: center, radii: (size * 0.5)...size, count: random.int(3...10), random: &random)
                let hole = GeoTestMath.starRing(center: center, radii: (size * 0.1)...(size * 0.2), count: 4, random: &random)
                // A hole lies inside the outer ring (a narrow star may not hold it: then none).
                let holds = try GeoPolygon(outerRing: outer)
                let holeFits = hole.allSatisfy(holds.contains)
                shape = try GeoPolygon(outerRing: outer, holes: random.int(0...1) == 0 || !holeFits ? [] : [hole])
                (near, spread) = (center, size * 1.2)
            }
            let maxRanges = [1, 4, 8, 16, 32][round % 5]
            let ranges = GeoCells.covering(shape, maxRanges: maxRanges)
            checkWellFormed(ranges, maxRanges: maxRanges, "seed \(seed) round \(round)")
            for k in 0..<60 {
                let p = k % 4 == 0 ? random.point() : random.point(near: near, distance: random.double(0...spread))
                if shape.contains(p) {
                    contained += 1
                    #expect(covers(ranges, GeoCells.cell(of: p)), "seed \(seed) round \(round): \(shape) \(p) ranges \(ranges)")
                    let bounds = shape.latitudeLongitudeBounds
                    #expect(bounds.contains(latitude: p.latitude * .pi / 180, longitude: p.longitude * .pi / 180),
                            "seed \(seed) round \(round): \(shape) \(p) bounds \(bounds)")
                }
            }
        }
        #expect(contained > 20_000)
    }

    /// Shapes at the awkward places of the scheme (cube corners and edges, poles, the
    /// antimeridian), with points on and just around their boundaries.
    @Test func coveringsHoldBoundaryPointsAtAwkwardPlaces() throws {
        let seed = SplitMix64.testSeed()
        var random = GeoRandom(seed: seed)
        let corner = atan(1 / 2.0.squareRoot()) * 180 / .pi   // latitude of the cube's corners
        let places = [point(corner, 45), point(-corner, -135), point(corner, 135), point(0, 45), point(45, 0), point(0, 135),
                      point(90, 0), point(-90, 0), point(0, 180), point(0, -180), point(45, 180), point(89.9999, -180)]
        var contained = 0
        for place in places {
            for radius in [1e-9, 1 / 6_371_008.8, 1e-5, 1e-3, 0.05, 0.7, 2.0] {
                let circle = try GeoCircle(center: place, radius: .radians(radius))
                let halfSide = min(radius * 180 / .pi, 40)
                let box = try GeoBox(bottomLeft: point(max(-90, place.latitude - halfSide), max(-180, place.longitude - halfSide)),
                                     topRight: point(min(90, place.latitude + halfSide), min(180, place.longitude + halfSide)))
                let ring = GeoTestMath.starRing(center: place, radii: (min(radius, 1) * 0.5)...min(radius, 1), count: 5, random: &random)
                // Near a pole the tiniest rings may round to fewer than 3 distinct points.
                let shapes: [any GeoShape] = [circle, box] + [try? GeoPolygon(outerRing: ring)].compactMap { $0 }
                for shape in shapes {
                    for maxRanges in [1, 3, 8, 20] {
                        let ranges = GeoCells.covering(shape, maxRanges: maxRanges)
                        checkWellFormed(ranges, maxRanges: maxRanges, "seed \(seed) \(shape)")
                        var points = [place]
                        for _ in 0..<40 {
                            let d = radius * [1, 1 - 1e-12, 1 + 1e-12, random.double(0...1)][random.int(0...3)]
                            points.append(random.point(near: place, distance: d))
                        }
                        points += ring + [box.bottomLeft, box.topRight, point(box.bottomLeft.latitude, box.topRight.longitude)]
                        for p in points where shape.contains(p) {
                            contained += 1
                            #expect(covers(ranges, GeoCells.cell(of: p)), "seed \(seed): \(shape) \(p) ranges \(ranges)")
                        }
                    }
                }
            }
        }
        #expect(contained > 5_000)
    }

    /// Covering sizes and costs for a range of shapes, printed for the record.
    @Test func coveringMeasurements() throws {
        var random = GeoRandom(seed: 99)
        var cells = (0..<1_000_000).map { _ in GeoCells.cell(of: random.point()) }
        cells.sort()
        func candidates(_ ranges: [ClosedRange<UInt64>]) -> Int {
            ranges.reduce(0) { $0 + lowerBound(cells, $1.upperBound &+ 1) - lowerBound(cells, $1.lowerBound) }
        }
        let paris = point(48.8566, 2.3522)
        let polygonRing = GeoTestMath.starRing(center: paris, radii: 0.01...0.02, count: 100, random: &random)
        let shapes: [(String, any GeoShape)] = [
            ("circle 10 km", try GeoCircle(center: paris, radiusInKilometers: 10)),
            ("circle 100 km", try GeoCircle(center: paris, radiusInKilometers: 100)),
            ("circle 100 km at the north pole", try GeoCircle(center: point(90, 0), radiusInKilometers: 100)),
            ("circle 1000 km on the antimeridian", try GeoCircle(center: point(10, 180), radiusInKilometers: 1000)),
            ("circle hemisphere", try GeoCircle(center: paris, radius: .radians(.pi / 2))),
            ("box 1° across the antimeridian", try GeoBox(bottomLeft: point(10, 179.5), topRight: point(11, -179.5))),
            ("box 10° x 10°", try GeoBox(bottomLeft: point(40, 0), topRight: point(50, 10))),
            ("polygon 100 vertices, ~100 km", try GeoPolygon(outerRing: polygonRing)),
        ]
        for (name, shape) in shapes {
            for maxRanges in [8, 16, 32] {
                let start = ContinuousClock.now
                var ranges: [ClosedRange<UInt64>] = []
                for _ in 0..<10 { ranges = GeoCells.covering(shape, maxRanges: maxRanges) }
                let time = (ContinuousClock.now - start) / 10
                print("\(name), maxRanges \(maxRanges): \(ranges.count) ranges, \(candidates(ranges)) candidates of 1,000,000, \(time) (debug build)")
            }
        }
    }

    /// Shapes not of Cellar get the whole globe.
    @Test func foreignShapesGetEverything() {
        struct Everywhere: GeoShape { func contains(_ point: GeoPoint) -> Bool { true } }
        #expect(GeoCells.covering(Everywhere(), maxRanges: 8) == [GeoCells.allCells])
    }

    @Test func mergingClosesTheSmallestGaps() {
        let merged = GeoCells.mergedRanges([20...29, 0...9, 10...12, 100...110, 40...50], maxRanges: 2)
        #expect(merged == [0...50, 100...110])
    }

    /// Candidates for 1 km circles among a million uniform points, and covering cost.
    @Test func oneKilometerCircleCandidates() throws {
        var random = GeoRandom(seed: 42)
        let count = 1_000_000
        var cells = [UInt64](repeating: 0, count: count)
        for k in 0..<count { cells[k] = GeoCells.cell(of: random.point()) }
        cells.sort()
        func candidates(_ ranges: [ClosedRange<UInt64>]) -> Int {
            ranges.reduce(0) { total, range in
                let low = lowerBound(cells, range.lowerBound), high = lowerBound(cells, range.upperBound &+ 1)
                return total + high - low
            }
        }
        let centers = [point(48.8566, 2.3522), point(0, 0), point(90, 0), point(-89.995, 77), point(0, 180), point(45, 45),
                       point(35.26439, 45)]  // a cube corner
        for maxRanges in [4, 8, 16, 32] {
            var worst = 0, total = 0, worstShare = 0.0, totalRanges = 0
            for center in centers + (0..<50).map({ _ in random.point() }) {
                let circle = try GeoCircle(center: center, radiusInKilometers: 1)
                let ranges = GeoCells.covering(circle, maxRanges: maxRanges)
                let n = candidates(ranges)
                worst = max(worst, n)
                total += n
                totalRanges += ranges.count
                // The share of all cell ids covered: about the expected candidates per point.
                let ids = ranges.reduce(0.0) { $0 + Double($1.upperBound - $1.lowerBound) + 1 }
                worstShare = max(worstShare, ids / Double(GeoCells.allCells.upperBound))
            }
            let shapes = Double(centers.count + 50)
            print("1 km circle, maxRanges \(maxRanges): \(Double(totalRanges) / shapes) ranges on average; candidates of \(count): worst \(worst), mean \(Double(total) / shapes); largest covering \(worstShare * 1e6) ids per million (circle: \(1e6 * Double.pi / 510_065_621))")
            #expect(worst < 300, "maxRanges \(maxRanges): \(worst) candidates")
        }
        let circle = try GeoCircle(center: point(48.8566, 2.3522), radiusInKilometers: 1)
        let start = ContinuousClock.now
        for _ in 0..<100 { _ = GeoCells.covering(circle, maxRanges: 16) }
        print("covering a 1 km circle, maxRanges 16: \((ContinuousClock.now - start) / 100) each (debug build)")
    }

    private func lowerBound(_ sorted: [UInt64], _ value: UInt64) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
