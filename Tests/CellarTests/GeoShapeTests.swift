@_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// GeoPoint, GeoDistance and the shapes: validation, known values, and seeded random shapes and
/// points compared with independent checks.
@Suite struct GeoShapeTests {
    private func point(_ latitude: Double, _ longitude: Double) -> GeoPoint {
        GeoPoint(uncheckedLatitude: latitude, longitude: longitude)
    }

    private func illegalArgument(_ body: () throws -> Void, mentioning words: [String]) {
        do {
            try body()
            Issue.record("no error thrown; expected one mentioning \(words)")
        } catch let error as CellarError {
            #expect(error.code == .illegalArgument)
            for word in words { #expect(error.message.contains(word), "\(error.message) lacks \(word)") }
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    private func isFileCorrupt(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch {
            return (error as? CellarError)?.code == .fileCorrupt
        }
    }

    // MARK: Validation

    @Test func pointRejectsOutOfRangeCoordinates() throws {
        illegalArgument({ _ = try GeoPoint(latitude: 90.5, longitude: 0) }, mentioning: ["latitude", "90.5", "-90...90"])
        illegalArgument({ _ = try GeoPoint(latitude: -91, longitude: 0) }, mentioning: ["latitude", "-90...90"])
        illegalArgument({ _ = try GeoPoint(latitude: .nan, longitude: 0) }, mentioning: ["latitude", "nan"])
        illegalArgument({ _ = try GeoPoint(latitude: 0, longitude: 180.01) }, mentioning: ["longitude", "180.01", "-180...180"])
        illegalArgument({ _ = try GeoPoint(latitude: 0, longitude: -.infinity) }, mentioning: ["longitude", "inf"])
        _ = try GeoPoint(latitude: 90, longitude: -180)
        _ = try GeoPoint(latitude: -90, longitude: 180)
    }

    @Test func shapesRejectBadArguments() throws {
        let p = point(10, 10)
        illegalArgument({ _ = try GeoBox(bottomLeft: point(20, 0), topRight: point(10, 5)) }, mentioning: ["20.0", "10.0"])
        illegalArgument({ _ = try GeoCircle(center: p, radius: .kilometers(-1)) }, mentioning: ["radius", "0...π"])
        illegalArgument({ _ = try GeoCircle(center: p, radius: .radians(.nan)) }, mentioning: ["radius"])
        illegalArgument({ _ = try GeoCircle(center: p, radiusInKilometers: 20_100) }, mentioning: ["radius", "km"])
        _ = try GeoCircle(center: p, radius: .radians(.pi))
        let open = [point(0, 0), point(0, 1), point(1, 1)]
        illegalArgument({ _ = try GeoPolygon(outerRing: open) }, mentioning: ["outer ring", "not closed"])
        illegalArgument({ _ = try GeoPolygon(outerRing: [point(0, 0), point(0, 1), point(0, 0)]) }, mentioning: ["outer ring", "2 distinct", "at least 3"])
        let square = [point(0, 0), point(0, 10), point(10, 10), point(10, 0), point(0, 0)]
        illegalArgument({ _ = try GeoPolygon(outerRing: square, holes: [square, open]) }, mentioning: ["hole 1", "not closed"])
        illegalArgument({ _ = try GeoPolygon(outerRing: square, holes: [square.map { point($0.latitude + 20, $0.longitude) }]) },
                        mentioning: ["hole 0", "outside the outer ring"])
        illegalArgument({ _ = try GeoPolygon(outerRing: [point(0, 0), point(0, 180), point(10, 10), point(0, 0)]) }, mentioning: ["antipodal"])
        illegalArgument({ _ = try GeoPolygon(outerRing: []) }, mentioning: ["outer ring", "0 points"])
    }

    // MARK: Distances

    @Test func knownDistances() throws {
        let paris = try GeoPoint(latitude: 48.8566, longitude: 2.3522)
        let london = try GeoPoint(latitude: 51.5074, longitude: -0.1278)
        let newYork = try GeoPoint(latitude: 40.7128, longitude: -74.0060)
        #expect(abs(paris.distance(to: london).kilometers - 343.5565) < 0.001)
        #expect(abs(newYork.distance(to: london).kilometers - 5570.2299) < 0.001)
        #expect(paris.distance(to: london) == london.distance(to: paris))
        #expect(paris.distance(to: paris).radians == 0)
        // Antipodes, exactly and nearly.
        #expect(abs(point(0, 0).distance(to: point(0, 180)).radians - .pi) < 1e-15)
        #expect(abs(point(90, 0).distance(to: point(-90, 77)).radians - .pi) < 1e-15)
        let nearlyAntipodal = point(1e-7, 180).distance(to: point(0, 0)).radians
        #expect(nearlyAntipodal < .pi && abs((Double.pi - nearlyAntipodal) - 1e-7 * .pi / 180) < 1e-15)
        // Tiny: a millionth of a degree along the equator, and a nanometre.
        #expect(abs(point(0, 0).distance(to: point(0, 1e-6)).radians - 1e-6 * .pi / 180) < 1e-22)
        let east = 45 + 1e-12   // not exactly 1e-12 more: rounded to the spacing of doubles near 45
        #expect(abs(point(45, 45).distance(to: point(45, east)).meters - (east - 45) * .pi / 180 * cos(.pi / 4) * 6_371_008.8) < 1e-18)
    }

    @Test func distanceUnits() {
        #expect(abs(GeoDistance.kilometers(6371.0088).radians - 1) < 1e-15)
        #expect(abs(GeoDistance.meters(1500).kilometers - 1.5) < 1e-12)
        #expect(abs(GeoDistance.miles(1).kilometers - 1.609344) < 1e-12)
        #expect(abs(GeoDistance.degrees(180).radians - .pi) < 1e-15)
        #expect(GeoDistance.kilometers(1) < GeoDistance.kilometers(2))
        #expect(abs(GeoDistance.radians(1).miles - 6371.0088 / 1.609344) < 1e-9)
    }

    @Test func distanceMatchesAnIndependentFormula() {
        let seed = SplitMix64.testSeed()
        var random = GeoRandom(seed: seed)
        for _ in 0..<5_000 {
            let a = random.point(), b = random.point()
            let d = a.distance(to: b).radians, check = GeoTestMath.angle(a, b)
            #expect(abs(d - check) < 1e-7, "seed \(seed): \(a) \(b)")
            #expect(d >= 0 && d <= .pi)
        }
    }

    // MARK: Encoding

    @Test func recordEncodingRoundTripsAndChecks() throws {
        let p = try GeoPoint(latitude: -33.8688, longitude: 151.2093)
        var bytes = [UInt8](repeating: 0, count: GeoPoint.encodedSize + 1)
        bytes.withUnsafeMutableBytes { p.encode(into: UnsafeMutableRawBufferPointer(rebasing: $0[1...])) }
        #expect(Array(bytes[1..<9]) == withUnsafeBytes(of: p.latitude.bitPattern.littleEndian, Array.init))
        let back = try bytes.withUnsafeBytes { try GeoPoint.decode(UnsafeRawBufferPointer(rebasing: $0[1...])) }
        #expect(back == p)

        for bad in [(91.0, 0.0), (0.0, -181.0), (Double.nan, 0.0), (0.0, Double.infinity)] {
            var raw = [UInt8](repeating: 0, count: 16)
            raw.withUnsafeMutableBytes { GeoPoint(uncheckedLatitude: bad.0, longitude: bad.1).encode(into: $0) }
            #expect(isFileCorrupt { _ = try raw.withUnsafeBytes { try GeoPoint.decode($0) } }, "\(bad)")
        }
        #expect(isFileCorrupt { _ = try [UInt8](repeating: 0, count: 15).withUnsafeBytes { try GeoPoint.decode($0) } })
    }

    @Test func codableRoundTripsAndChecks() throws {
        let p = try GeoPoint(latitude: 12.5, longitude: -7.25)
        let data = try JSONEncoder().encode(p)
        #expect(try JSONDecoder().decode(GeoPoint.self, from: data) == p)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(GeoPoint.self, from: Data(#"{"latitude": 100, "longitude": 0}"#.utf8))
        }
        #expect(p.description == "GeoPoint(latitude: 12.5, longitude: -7.25)")
    }

    // MARK: Boxes

    @Test func boxBasicsAndAntimeridian() throws {
        let box = try GeoBox(bottomLeft: point(-10, 170), topRight: point(10, -170))
        #expect(box.crossesAntimeridian)
        #expect(box.contains(point(0, 180)) && box.contains(point(0, -180)) && box.contains(point(5, 175)) && box.contains(point(-10, -170)))
        #expect(!box.contains(point(0, 0)) && !box.contains(point(11, 180)) && !box.contains(point(0, -169.9)))
        let north = try GeoBox(bottomLeft: point(80, 10), topRight: point(90, 20))
        #expect(north.contains(point(90, -150)))   // the pole, named with any longitude
        #expect(!north.contains(point(85, -150)))
        let edge = try GeoBox(bottomLeft: point(0, 100), topRight: point(5, 180))
        #expect(edge.contains(point(3, -180)))
        let world = try GeoBox(bottomLeft: point(-90, -180), topRight: point(90, 180))
        #expect(world.contains(point(12, 34)))
    }

    @Test func randomBoxesMatchAnIndependentCheck() {
        let seed = SplitMix64.testSeed()
        var random = GeoRandom(seed: seed)
        for _ in 0..<300 {
            let a = random.double(-90...90), b = random.double(-90...90)
            let west = random.double(-180...180), east = random.int(0...9) == 0 ? west : random.double(-180...180)
            let box = try! GeoBox(bottomLeft: point(min(a, b), west), topRight: point(max(a, b), east))
            for k in 0..<100 {
                let p = k % 2 == 0 ? random.point()
                    : point(random.double(min(a, b)...max(a, b)), [west, east, random.double(-180...180)][k % 3])
                let expected = GeoTestMath.boxContains(south: min(a, b), north: max(a, b), west: west, east: east, p)
                #expect(box.contains(p) == expected, "seed \(seed): \(box) \(p)")
            }
        }
    }

    // MARK: Circles

    @Test func circleBasics() throws {
        let pole = try GeoCircle(center: point(89, 0), radiusInKilometers: 300)   // holds the north pole
        #expect(pole.contains(point(90, 123)) && pole.contains(point(88.5, 180)) && !pole.contains(point(86, 180)))
        let dateLine = try GeoCircle(center: point(0, 179.5), radius: .degrees(1))
        #expect(dateLine.contains(point(0, -179.6)) && dateLine.contains(point(0.5, 180)) && !dateLine.contains(point(0, 178.4)))
        let everything = try GeoCircle(center: point(12, 34), radius: .radians(.pi))
        #expect(everything.contains(point(-12, -146)))
        let one = try GeoCircle(center: point(45, 45), radius: .meters(1))
        #expect(one.contains(GeoTestMath.destination(point(45, 45), bearing: 1, distance: 0.999 / 6_371_008.8)))
        #expect(!one.contains(GeoTestMath.destination(point(45, 45), bearing: 1, distance: 1.001 / 6_371_008.8)))
    }

    @Test func randomCirclesMatchAnIndependentCheck() {
        let seed = SplitMix64.testSeed()
        var random = GeoRandom(seed: seed)
        for round in 0..<400 {
            let center: GeoPoint, radius: Double
            switch round % 4 {
            case 0: (center, radius) = (point(random.double(80...90) * (round % 8 == 0 ? 1 : -1), random.double(-180...180)), random.double(0.01...0.5))
            case 1: (center, radius) = (random.point(), 1 / 6_371_008.8)   // 1 m
            case 2: (center, radius) = (random.point(), random.double(1.4...1.75))   // about a hemisphere
            default: (center, radius) = (point(random.double(-60...60), random.double(175...180)), random.double(0.001...0.2))
            }
            let circle = try! GeoCircle(center: center, radius: .radians(radius))
            for k in 0..<60 {
                let p = k % 3 == 0 ? random.point() : random.point(near: center, distance: random.double(0...(2 * radius)))
                let d = GeoTestMath.angle(center, p)
                // acos is imprecise for tiny angles: compare only clear cases.
                let clear = radius > 1e-6 ? abs(d - radius) > 1e-7 : abs(d - radius) > radius * 1e-3 + 1e-12
                if clear { #expect(circle.contains(p) == (d <= radius), "seed \(seed): \(circle) \(p)") }
            }
        }
    }

    // MARK: Polygons

    @Test func polygonBasics() throws {
        // A ring around the north pole, either way round.
        let cap = (0...12).map { point(80, Double($0 % 12) * 30 - 180) }
        for ring in [cap, cap.reversed()] {
            let polygon = try GeoPolygon(outerRing: ring)
            #expect(polygon.contains(point(90, 0)) && polygon.contains(point(85, 17)) && polygon.contains(point(80.2, 180)))
            #expect(!polygon.contains(point(75, 0)) && !polygon.contains(point(-90, 0)))
        }
        // Across the antimeridian, with a hole.
        let outer = [point(-10, 170), point(-10, -170), point(10, -170), point(10, 170), point(-10, 170)]
        let hole = [point(-2, 178), point(2, 178), point(2, -178), point(-2, -178), point(-2, 178)]
        let polygon = try GeoPolygon(outerRing: outer, holes: [hole])
        #expect(polygon.contains(point(5, 180)) && polygon.contains(point(-5, -175)) && polygon.contains(point(0, 172)))
        #expect(!polygon.contains(point(0, 180)) && !polygon.contains(point(1, -179)))
        #expect(!polygon.contains(point(0, 0)) && !polygon.contains(point(0, 160)))
        // Geodesic edges: the edge along latitude 10 bulges north.
        #expect(polygon.contains(point(10.05, 180)))
        // The boundary belongs to the polygon: vertices, an equator edge, hole edges.
        let square = try GeoPolygon(outerRing: [point(0, 0), point(0, 10), point(10, 10), point(10, 0), point(0, 0)])
        #expect(square.contains(point(0, 5)) && square.contains(point(10, 10)) && square.contains(point(0, 0)))
        #expect(polygon.contains(point(-2, 178)) && polygon.contains(point(0, 178)))
        #expect(!square.contains(point(-0.001, 5)))
        // Equal shapes are equal.
        #expect(try GeoPolygon(outerRing: outer, holes: [hole]) == polygon)
    }

    @Test func randomPolygonsMatchAnIndependentCheck() {
        let seed = SplitMix64.testSeed()
        var random = GeoRandom(seed: seed)
        var checked = 0
        for round in 0..<300 {
            let center: GeoPoint
            switch round % 3 {
            case 0: center = point(random.double(-5...5), random.double(170...180) * (round % 2 == 0 ? 1 : -1))   // antimeridian
            case 1: center = point(random.double(75...90) * (round % 2 == 0 ? 1 : -1), random.double(-180...180))  // poles
            default: center = random.point()
            }
            let size = [0.0000001, 0.00001, 0.01, 0.3, 1.0][random.int(0...4)]
            let outer = GeoTestMath.starRing(center: center, radii: (size * 0.5)...size, count: random.int(3...12), random: &random)
            var holes = random.int(0...1) == 0 ? [] : [GeoTestMath.starRing(center: center, radii: (size * 0.1)...(size * 0.2), count: random.int(3...6), random: &random)]
            // A hole lies inside the outer ring (a narrow star may not hold it: then none).
            if let hole = holes.first, !hole.allSatisfy(try! GeoPolygon(outerRing: outer).contains) { holes = [] }
            let polygon = try! GeoPolygon(outerRing: outer, holes: holes)
            for k in 0..<80 {
                let p = k % 4 == 0 ? random.point() : random.point(near: center, distance: random.double(0...(1.2 * size)))
                guard let inOuter = GeoTestMath.ringContains(outer, center: center, p) else { continue }
                var expected = inOuter
                if expected, let hole = holes.first {
                    guard let inHole = GeoTestMath.ringContains(hole, center: center, p) else { continue }
                    expected = !inHole
                }
                checked += 1
                #expect(polygon.contains(p) == expected, "seed \(seed): \(outer) holes \(holes) \(p)")
            }
        }
        #expect(checked > 20_000)
    }
}
