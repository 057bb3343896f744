@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// GeoPoint properties through the generated `Place` binding: round trips, `isWithin` with the
/// geo index (`location`) and without one (`entrance`, holding the same point) against the
/// shapes' own `contains` over the objects in memory — random points with boxes across the
/// antimeridian, circles around the poles, tiny and hemisphere-size circles, polygons with holes —,
/// ordering by distance, upkeep through updates and removals, and refusals.
@Suite struct GeoQueryTests {
    static func point(_ latitude: Double, _ longitude: Double) -> GeoPoint {
        try! GeoPoint(latitude: latitude, longitude: longitude)
    }

    static func ids(_ query: Query<Place>) throws -> [Id] { try query.findIds().map(\.value) }

    @Test func pointsRoundTripAndAnAbsentPointReadsZero() throws {
        let store = try Store(directoryPath: "memory:geo-roundtrip", model: cellarModel())
        let box = store.box(for: Place.self)
        let id = try box.put(Place("Lyon", Self.point(45.76, 4.84))).value
        let read = try #require(try box.get(id))
        #expect(read.location == Self.point(45.76, 4.84) && read.entrance == Self.point(45.76, 4.84))
        let nowhere = try box.put(Place("Nowhere", nil)).value
        #expect(try box.get(nowhere)?.location == nil)
        #expect(try box.get(nowhere)?.entrance == Self.point(0, 0))
        #expect(try box.query { Place.location.isNil() }.build().count() == 1)
    }

    @Test func shapesFindTheSamePointsWithAndWithoutTheIndex() throws {
        let store = try Store(directoryPath: "memory:geo-shapes", model: cellarModel())
        let box = store.box(for: Place.self)
        var random = SplitMix64(seed: 11)
        func uniform() -> Double { Double(random.next() >> 11) / Double(1 << 53) }
        var places: [Id: Place] = [:]
        // Uniform over the sphere, plus clusters at the poles, around the antimeridian and
        // around Paris (for the tiny circles).
        func randomPoint() -> GeoPoint {
            switch random.next() % 5 {
            case 0: return Self.point(90 - uniform() * 3, uniform() * 360 - 180)
            case 1: return Self.point(uniform() * 20 - 10, (uniform() < 0.5 ? 179 : -180) + uniform())
            case 2: return Self.point(48.85 + (uniform() - 0.5) * 0.02, 2.35 + (uniform() - 0.5) * 0.02)
            default: return Self.point(asin(uniform() * 2 - 1) * 180 / .pi, uniform() * 360 - 180)
            }
        }
        try store.runInTransaction {
            for k in 0..<2_000 {
                let place = Place("p\(k)", k % 25 == 0 ? nil : randomPoint(), rating: k % 5)
                places[try box.put(place).value] = place
            }
        }
        let paris = Self.point(48.85, 2.35)
        var shapes: [(String, any GeoShape)] = [
            ("a box across the antimeridian", try GeoBox(bottomLeft: Self.point(-5, 179.5), topRight: Self.point(5, -179.5))),
            ("a box around Paris", try GeoBox(bottomLeft: Self.point(48.845, 2.345), topRight: Self.point(48.855, 2.355))),
            ("a circle around the north pole", try GeoCircle(center: Self.point(89, 30), radius: .kilometers(300))),
            ("a 1 km circle", try GeoCircle(center: paris, radiusInKilometers: 1)),
            ("a 10 m circle", try GeoCircle(center: paris, radius: .meters(10))),
            ("a hemisphere", try GeoCircle(center: Self.point(10, -20), radius: .degrees(90))),
            ("almost everything", try GeoCircle(center: Self.point(-30, 100), radius: .degrees(170))),
            ("a polygon with a hole", try GeoPolygon(
                outerRing: [Self.point(48.84, 2.34), Self.point(48.84, 2.36), Self.point(48.86, 2.36), Self.point(48.86, 2.34), Self.point(48.84, 2.34)],
                holes: [[Self.point(48.848, 2.348), Self.point(48.848, 2.352), Self.point(48.852, 2.352), Self.point(48.852, 2.348), Self.point(48.848, 2.348)]])),
            ("a polygon across the antimeridian", try GeoPolygon(
                outerRing: [Self.point(-8, 178), Self.point(-8, -178), Self.point(8, -178), Self.point(8, 178), Self.point(-8, 178)])),
        ]
        for _ in 0..<20 {
            shapes.append(("a random circle", try GeoCircle(center: randomPoint(), radius: .kilometers(uniform() * 2_000))))
        }
        for (name, shape) in shapes {
            // The indexed property's query reads the index's cells; the other one scans.
            if case .index = try box.query({ Place.location.isWithin(shape) }).build().compiled.plan.source {} else {
                Issue.record("\(name): the geo index is not used")
            }
            if case .scan = try box.query({ Place.entrance.isWithin(shape) }).build().compiled.plan.source {} else {
                Issue.record("\(name): an unindexed point is not scanned")
            }
            let expected = places.filter { $0.value.location.map(shape.contains) ?? false }.keys.sorted()
            #expect(try Self.ids(box.query { Place.location.isWithin(shape) }.build()) == expected, "\(name), indexed")
            #expect(try Self.ids(box.query { Place.entrance.isWithin(shape) && Place.location.isNotNil() }.build()) == expected, "\(name), scanned")
            #expect(try box.query { Place.location.isWithin(shape) }.build().count() == expected.count, "\(name), count")
            let good = places.filter { ($0.value.location.map(shape.contains) ?? false) && $0.value.rating >= 3 }.keys.sorted()
            #expect(try Self.ids(box.query { Place.location.isWithin(shape) && Place.rating >= 3 }.build()) == good, "\(name) && rating")
        }
        #expect(shapes.contains { name, shape in name == "a 1 km circle" && places.values.contains { $0.location.map(shape.contains) ?? false } })
    }

    /// A box crossing the antimeridian by less than the rounding to radians (adjacent doubles)
    /// goes nearly all around the globe: the index must find what a scan finds.
    @Test func aBoxWrappingByARoundingErrorCoversTheGlobe() throws {
        let store = try Store(directoryPath: "memory:geo-wrap", model: cellarModel())
        let box = store.box(for: Place.self)
        let inside = try box.put(Place("east", Self.point(0, 100))).value
        try box.put(Place("north", Self.point(20, 100)))
        let wrap = try GeoBox(bottomLeft: Self.point(-10, 29.970581581317138), topRight: Self.point(10, 29.970581581317134))
        #expect(wrap.crossesAntimeridian && wrap.contains(Self.point(0, 100)))
        #expect(try Self.ids(box.query { Place.location.isWithin(wrap) }.build()) == [inside])
        #expect(GeoCells.covering(wrap, maxRanges: 8).contains { $0.contains(GeoCells.cell(of: Self.point(0, 100))) })
    }

    @Test func resultsOrderByDistance() throws {
        let store = try Store(directoryPath: "memory:geo-order", model: cellarModel())
        let box = store.box(for: Place.self)
        let here = Self.point(45.0, 5.0)
        let far = try box.put(Place("far", Self.point(46.0, 5.0))).value
        let near = try box.put(Place("near", Self.point(45.01, 5.0))).value
        let none = try box.put(Place("none", nil)).value
        let middle = try box.put(Place("middle", Self.point(45.0, 5.3))).value
        let ordered = try box.query().ordered(byDistanceFrom: here, in: Place.location).build()
        #expect(try Self.ids(ordered) == [near, middle, far, none])
        let nearest = try box.query { Place.location.isWithin(GeoCircle(center: here, radiusKilometers: 50)) }
            .ordered(byDistanceFrom: here, in: Place.location).build()
        #expect(try nearest.find(offset: 0, limit: 1).map(\.name) == ["near"])
        #expect(try Self.ids(nearest) == [near, middle])
    }

    @Test func compactionKeepsTheIndexAndObserversSeeNewPoints() async throws {
        let directory = TestDirectory("geo-compact-observe")
        defer { directory.remove() }
        let store = try Store(directoryPath: directory.path, model: cellarModel())
        let box = store.box(for: Place.self)
        try box.put((0..<300).map { Place("p\($0)", Self.point(Double($0 % 60) - 30, Double($0) - 150), rating: $0 % 3) })
        let band = try GeoBox(bottomLeft: Self.point(-10, -180), topRight: Self.point(10, 180))
        try box.query { Place.rating == 0 }.build().remove()
        try box.put((0..<50).map { Place("q\($0)", Self.point(5, Double($0)), rating: 1) })
        try await store.compact()
        let expected = try box.all().filter { $0.location.map(band.contains) ?? false }.map(\.id).sorted()
        #expect(expected.count > 50)
        #expect(try Self.ids(box.query { Place.location.isWithin(band) }.build()) == expected)
        #expect(try RecordCheck.verify(store.engine).indexEntries == 250)
        let lyon = try GeoCircle(center: Self.point(45.76, 4.84), radiusInKilometers: 5)
        var iterator = try box.query { Place.location.isWithin(lyon) }.build().changes().makeAsyncIterator()
        #expect(try await iterator.next()?.count == 0)
        try box.put(Place("Lyon", Self.point(45.76, 4.84)))
        #expect(try await iterator.next()?.map(\.name) == ["Lyon"])
    }

    @Test func theIndexFollowsUpdatesAndRemovals() throws {
        let store = try Store(directoryPath: "memory:geo-upkeep", model: cellarModel())
        let box = store.box(for: Place.self)
        let lyon = try GeoCircle(center: Self.point(45.76, 4.84), radiusInKilometers: 20)
        let place = Place("moving", Self.point(45.76, 4.84))
        let id = try box.put(place).value
        #expect(try Self.ids(box.query { Place.location.isWithin(lyon) }.build()) == [id])
        place.location = Self.point(-33.9, 151.2)
        try box.put(place)
        #expect(try Self.ids(box.query { Place.location.isWithin(lyon) }.build()) == [])
        #expect(try RecordCheck.verify(store.engine).indexEntries == 1)
        place.location = nil
        try box.put(place)
        #expect(try RecordCheck.verify(store.engine).indexEntries == 0)
        place.location = Self.point(45.7, 4.8)
        try box.put(place)
        #expect(try Self.ids(box.query { Place.location.isWithin(lyon) }.build()) == [id])
        #expect(try box.remove(id))
        #expect(try box.query { Place.location.isWithin(lyon) }.build().count() == 0)
        #expect(try RecordCheck.verify(store.engine).indexEntries == 0)
    }

    @Test func misuseIsRefusedWithClearErrors() throws {
        let store = try Store(directoryPath: "memory:geo-errors", model: cellarModel())
        let box = store.box(for: Place.self)
        #expect(throws: CellarError.self) { try GeoPoint(latitude: 91, longitude: 0) }
        #expect(throws: CellarError.self) { try GeoPoint(latitude: 0, longitude: -180.5) }
        #expect(throws: CellarError.self) { try GeoPoint(latitude: .nan, longitude: 0) }
        let circle = try GeoCircle(center: Self.point(0, 0), radiusInKilometers: 1)
        for build in [
            { _ = try box.query { Place.rating.isWithin(circle) }.build() },
            { _ = try box.query { Place.location == 3 }.build() },
            { _ = try box.query().ordered(by: Place.location).build() },
            { _ = try box.query().ordered(byDistanceFrom: Self.point(0, 0), in: Place.name).build() },
            { _ = try box.query { Place.location.isWithin(GeoCircle(center: Self.point(0, 0), radiusKilometers: -1)) }.build() },
            { _ = try box.query { Place.location.isWithin(GeoCircle(center: Self.point(0, 0), radiusRadians: .nan)) }.build().find() },
        ] {
            do {
                try build()
                Issue.record("a misuse was built")
            } catch let error as CellarError {
                #expect(error.code == .illegalArgument, "\(error)")
            }
        }
    }
}
