// libFuzzer target: the geospatial decoding and index coverings (`GeoPoint` in records, the
// shapes' public initializers, `GeoCells`), and the full-text index's stored statistics.
//
// Input:
//
// - bytes 0…15: a stored GeoPoint, decoded as a record's field is (`GeoPoint.decode`). It must
//   throw `CellarError.fileCorrupt` (fewer than 16 bytes, a coordinate out of range, NaN or
//   infinite) or give a point in range whose encoding is those 16 bytes.
// - then a shape: a byte picks a box, a circle or a polygon (with holes), another `maxRanges`
//   (-2…37), and the following bytes give its parameters (coordinates raw as Float64 bits, at or
//   past the edges of their ranges, or spread over a little more than their range). Points and
//   shapes are built through the public throwing initializers: bad parameters must throw
//   `illegalArgument`. A shape that is built is covered (`GeoCells.covering`): at least one and
//   at most `max(1, maxRanges)` ranges of cell ids, sorted, not overlapping, within the cell ids;
//   and every point the shape contains (the decoded point, the shape's corners, center and
//   vertices, points between them, points from the rest of the input) has its cell
//   (`GeoCells.cell(of:)`) in one of the ranges. Polygons come as free rings (which may cross
//   themselves, not expected by `GeoPolygon`: their points' containment is not checked) or as
//   star-shaped rings that cannot cross themselves, with maybe a hole inside.
// - the input's last byte n: the n mod 33 bytes before it are a full-text index's statistics
//   (`FullTextIndex.Stats(decoding:index:)`), which must throw `fileCorrupt` unless they are 16
//   bytes of two little-endian counts with objects ≥ 0 and words ≥ objects, and then give them.
//
// Anything else (another error, a crash, a trap, an AddressSanitizer report) is a bug in Cellar.
@_spi(Testing) import Cellar
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The input's bytes in hex, for trap messages.
func hex(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

/// Reads the input's bytes in turn; zeros past its end.
struct Reader {
    let bytes: [UInt8]
    var position: Int

    var atEnd: Bool { position >= bytes.count }

    mutating func byte() -> UInt8 {
        defer { position += 1 }
        return position < bytes.count ? bytes[position] : 0
    }

    mutating func uint32() -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 { value = value << 8 | UInt32(byte()) }
        return value
    }

    mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return value
    }

    /// A number for a parameter whose valid range is -limit...limit (or 0...limit): a byte picks
    /// raw Float64 bits, a value at or just past the edges, or one spread over a little more than
    /// the range.
    mutating func number(limit: Double, from low: Double? = nil) -> Double {
        let low = low ?? -limit
        let tag = byte()
        switch tag % 8 {
        case 0:
            return Double(bitPattern: uint64())
        case 1:
            let edges: [Double] = [low, limit, 0, -0.0, low.nextDown, limit.nextUp, low.nextUp, limit.nextDown,
                                   .nan, .infinity, -.infinity, .ulpOfOne, -limit / 2, limit / 2, 1e-300, -1e-9]
            return edges[Int(tag >> 3) % edges.count]
        case 2:
            // Small: near zero.
            return (Double(uint32()) / Double(UInt32.max) - 0.5) * 1e-6 * limit
        default:
            let span = (limit - low) * 1.02
            return low - (limit - low) * 0.01 + Double(uint32()) / Double(UInt32.max) * span
        }
    }

    /// A point built with the public initializer; nil when it (rightly) throws.
    mutating func point() -> GeoPoint? {
        let latitude = number(limit: 90), longitude = number(limit: 180)
        return makePoint(latitude, longitude)
    }
}

/// `GeoPoint(latitude:longitude:)`, which must throw `illegalArgument` exactly for coordinates out
/// of range, NaN or infinite.
func makePoint(_ latitude: Double, _ longitude: Double) -> GeoPoint? {
    let valid = latitude.isFinite && (-90.0...90.0).contains(latitude) && longitude.isFinite && (-180.0...180.0).contains(longitude)
    do {
        let point = try GeoPoint(latitude: latitude, longitude: longitude)
        precondition(valid, "GeoPoint(latitude: \(latitude), longitude: \(longitude)) was made")
        precondition(point.latitude.bitPattern == latitude.bitPattern && point.longitude.bitPattern == longitude.bitPattern,
                     "GeoPoint(latitude: \(latitude), longitude: \(longitude)) holds \(point)")
        return point
    } catch CellarError.Code.illegalArgument {
        precondition(!valid, "GeoPoint(latitude: \(latitude), longitude: \(longitude)) was refused")
        return nil
    } catch {
        fatalError("GeoPoint(latitude: \(latitude), longitude: \(longitude)) threw \(error), not illegalArgument")
    }
}

/// Runs a shape's throwing initializer: the shape, or nil when it throws `illegalArgument`.
func build<Shape>(_ what: @autoclosure () -> String, _ body: () throws -> Shape) -> Shape? {
    do {
        return try body()
    } catch CellarError.Code.illegalArgument {
        return nil
    } catch {
        fatalError("\(what()) threw \(error), not illegalArgument")
    }
}

/// The point in the direction of the vector (x, y, z); nil for a vector near zero.
func point(x: Double, y: Double, z: Double) -> GeoPoint? {
    let norm = (x * x + y * y + z * z).squareRoot()
    guard norm > 1e-9, norm.isFinite else { return nil }
    let latitude = min(90, max(-90, asinDegrees(z / norm)))
    let longitude = atan2Degrees(y, x)
    return try? GeoPoint(latitude: latitude, longitude: min(180, max(-180, longitude)))
}

func asinDegrees(_ value: Double) -> Double { atan2Degrees(value, (max(0, 1 - value * value)).squareRoot()) }

/// atan2 in degrees.
func atan2Degrees(_ y: Double, _ x: Double) -> Double { atan2(y, x) * 180 / Double.pi }

/// The unit vector of `point`.
func vector(_ point: GeoPoint) -> (Double, Double, Double) {
    let phi = point.latitude * Double.pi / 180, lambda = point.longitude * Double.pi / 180
    return (cos(phi) * cos(lambda), cos(phi) * sin(lambda), sin(phi))
}

/// The point `fraction` of the way from `a` to `b` (through the chord, projected back).
func between(_ a: GeoPoint, _ b: GeoPoint, _ fraction: Double) -> GeoPoint? {
    let (ax, ay, az) = vector(a), (bx, by, bz) = vector(b)
    return point(x: ax + (bx - ax) * fraction, y: ay + (by - ay) * fraction, z: az + (bz - az) * fraction)
}

/// The point `distance` radians from `center` at `bearing` radians (clockwise from north).
func destination(_ center: GeoPoint, bearing: Double, distance: Double) -> GeoPoint? {
    let phi = center.latitude * Double.pi / 180, lambda = center.longitude * Double.pi / 180
    let sinLat = sin(phi) * cos(distance) + cos(phi) * sin(distance) * cos(bearing)
    let lat = asin(max(-1, min(1, sinLat)))
    var lon = lambda + atan2(sin(bearing) * sin(distance) * cos(phi), cos(distance) - sin(phi) * sinLat)
    if lon > Double.pi { lon -= 2 * Double.pi }
    if lon < -Double.pi { lon += 2 * Double.pi }
    return try? GeoPoint(latitude: max(-90, min(90, lat * 180 / Double.pi)), longitude: max(-180, min(180, lon * 180 / Double.pi)))
}

/// A simple ring around a center, and maybe a hole in it: the vertices at increasing bearings
/// from the center (consecutive ones less than 180° apart) and at distances below 90°. In the
/// gnomonic projection about the center (great circles are straight lines, bearings are kept)
/// that is a star-shaped polygon around the center, which cannot cross itself. The hole is such a
/// ring around the same center, within the outer ring's inner radius.
///
/// Bytes: the center, then (vertices 3…8), the rotation, the size (1e-6 to about 1.5 rad), per
/// vertex a byte for the bearing's jitter and one for the distance; then (bit 0: a hole) and the
/// hole's bytes alike.
func starRings(_ reader: inout Reader) -> [[GeoPoint]]? {
    guard let center = reader.point() else { return nil }
    func ring(maxDistance: Double) -> (ring: [GeoPoint], inner: Double)? {
        let n = 3 + Int(reader.byte() % 6)
        let rotation = Double(reader.byte()) / 256 * 2 * Double.pi
        var ring: [GeoPoint] = []
        var nearest = Double.infinity
        for k in 0..<n {
            let bearing = rotation + 2 * Double.pi * (Double(k) + 0.45 * Double(reader.byte()) / 255) / Double(n)
            let distance = maxDistance * (0.2 + 0.8 * Double(reader.byte()) / 255)
            guard let p = destination(center, bearing: bearing, distance: distance) else { return nil }
            ring.append(p)
            nearest = min(nearest, distance)
        }
        ring.append(ring[0])
        // Gaps between bearings are at most 2π·1.45/n ≤ 0.97π: the ring's edges stay farther from
        // the center than tan(nearest)·cos(0.485π) in the projection.
        return (ring, atan(tan(nearest) * cos(0.485 * Double.pi)))
    }
    let size = min(1.5, 1e-6 * pow(10, Double(reader.byte()) / 255 * 6.2))
    guard let outer = ring(maxDistance: size) else { return nil }
    var rings = [outer.ring]
    if reader.byte() & 1 == 1, let hole = ring(maxDistance: outer.inner * 0.9) {
        rings.append(hole.ring)
    }
    return rings
}

/// Checks the covering of `shape` and that it holds the cell of each of `points` the shape contains
/// (and `also` accepts).
func checkCovering(_ shape: some GeoShape, maxRanges: Int, points: [GeoPoint], input: [UInt8],
                   also: (GeoPoint) -> Bool = { _ in true }) {
    let ranges = GeoTesting.covering(shape, maxRanges: maxRanges)
    func fail(_ problem: String) -> Never {
        fatalError("covering of \(shape), maxRanges \(maxRanges): \(problem); ranges \(ranges); input \(hex(input))")
    }
    if ranges.isEmpty { fail("no range") }
    if ranges.count > max(1, maxRanges) { fail("\(ranges.count) ranges") }
    let all = GeoTesting.allCells
    for (index, range) in ranges.enumerated() {
        if range.lowerBound < all.lowerBound || range.upperBound > all.upperBound { fail("range \(index) is outside the cell ids") }
        if index > 0 && ranges[index - 1].upperBound >= range.lowerBound { fail("ranges \(index - 1) and \(index) overlap or are out of order") }
    }
    for point in points {
        let cell = GeoTesting.cell(of: point)
        if !all.contains(cell) { fatalError("cell(of: \(point)) is \(cell), not a cell id; input \(hex(input))") }
        guard shape.contains(point), also(point) else { continue }
        if !ranges.contains(where: { $0.contains(cell) }) {
            fail("\(point) is in the shape but its cell \(String(cell, radix: 16)) is in no range")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))

    // Full-text statistics: the n mod 33 bytes before the last byte n.
    if let last = input.last {
        let count = min(Int(last) % 33, input.count - 1)
        let bytes = Array(input[(input.count - 1 - count)..<(input.count - 1)])
        var documents: Int64 = 0, words: Int64 = 0
        for index in (0..<8).reversed() where bytes.count == 16 {
            documents = documents << 8 | Int64(bytes[index])
            words = words << 8 | Int64(bytes[8 + index])
        }
        let valid = bytes.count == 16 && documents >= 0 && words >= documents
        do {
            let stats = try bytes.withUnsafeBytes { try FullTextIndexTesting.decodeStatistics($0) }
            precondition(valid, "statistics \(hex(bytes)) decode to \(stats)")
            precondition(stats.documents == documents && stats.words == words,
                         "statistics \(hex(bytes)) decode to \(stats), not (\(documents), \(words))")
        } catch CellarError.Code.fileCorrupt {
            precondition(!valid, "statistics \(hex(bytes)) (\(documents) objects, \(words) words) are refused")
        } catch {
            fatalError("statistics \(hex(bytes)) threw \(error), not fileCorrupt")
        }
    }

    // The stored point.
    let stored = Array(input.prefix(16))
    var decoded: GeoPoint?
    do {
        let point = try stored.withUnsafeBytes { try GeoTesting.decodePoint($0) }
        precondition(point.latitude.isFinite && (-90.0...90.0).contains(point.latitude)
                     && point.longitude.isFinite && (-180.0...180.0).contains(point.longitude),
                     "the stored point \(hex(stored)) decodes to \(point), out of range")
        precondition(GeoTesting.encodePoint(point) == stored, "the stored point \(hex(stored)) encodes again to \(hex(GeoTesting.encodePoint(point)))")
        decoded = point
    } catch CellarError.Code.fileCorrupt {
        if stored.count == 16 {
            let latitude = Double(bitPattern: stored.reversed().suffix(8).reduce(0) { $0 << 8 | UInt64($1) })
            let longitude = Double(bitPattern: stored.reversed().prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
            precondition(makePoint(latitude, longitude) == nil, "the stored point \(hex(stored)) is refused")
        }
    } catch {
        fatalError("the stored point \(hex(stored)) threw \(error), not fileCorrupt")
    }
    guard input.count > 16 else { return 0 }

    // The shape.
    var reader = Reader(bytes: input, position: 16)
    let kind = reader.byte()
    let maxRanges = Int(reader.byte() % 40) - 2
    var points: [GeoPoint] = decoded.map { [$0] } ?? []
    switch kind % 3 {
    case 0:
        guard let a = reader.point(), let b = reader.point() else { break }
        guard let box = build("GeoBox(bottomLeft: \(a), topRight: \(b))", { try GeoBox(bottomLeft: a, topRight: b) }) else {
            precondition(a.latitude > b.latitude, "GeoBox(bottomLeft: \(a), topRight: \(b)) was refused")
            return 0
        }
        precondition(a.latitude <= b.latitude, "GeoBox(bottomLeft: \(a), topRight: \(b)) was made")
        let corners = [a, b, try? GeoPoint(latitude: a.latitude, longitude: b.longitude), try? GeoPoint(latitude: b.latitude, longitude: a.longitude)]
        points += corners.compactMap { $0 }
        // Points inside: fractions of the latitude and longitude spans.
        let span = box.crossesAntimeridian ? b.longitude + 360 - a.longitude : b.longitude - a.longitude
        for _ in 0..<4 {
            let f = Double(reader.byte()) / 255, g = Double(reader.byte()) / 255
            var longitude = a.longitude + span * g
            if longitude > 180 { longitude -= 360 }
            if let p = try? GeoPoint(latitude: min(b.latitude, a.latitude + (b.latitude - a.latitude) * f), longitude: min(180, max(-180, longitude))) {
                points.append(p)
            }
        }
        while !reader.atEnd, let p = reader.point() { points.append(p) }
        checkCovering(box, maxRanges: maxRanges, points: points, input: input)
    case 1:
        guard let center = reader.point() else { break }
        let radians = reader.number(limit: Double.pi, from: 0)
        let useKilometers = reader.byte() & 1 == 1
        let kilometers = radians * GeoDistance.earthRadiusKilometers
        guard let circle = build("GeoCircle(center: \(center), radius: \(radians) rad)", {
            useKilometers ? try GeoCircle(center: center, radiusInKilometers: kilometers) : try GeoCircle(center: center, radius: .radians(radians))
        }) else {
            let r = useKilometers ? GeoDistance.kilometers(kilometers).radians : radians
            precondition(!(r >= 0 && r <= Double.pi), "GeoCircle(center: \(center), radius: \(r) rad) was refused")
            return 0
        }
        let r = circle.radius.radians
        precondition(r >= 0 && r <= Double.pi, "GeoCircle of radius \(r) rad was made")
        points.append(center)
        // Points near the center: offsets of a fraction of the radius in latitude and longitude.
        let degrees = r * 180 / Double.pi
        for _ in 0..<4 {
            let f = (Double(reader.byte()) / 255 * 2 - 1) * degrees, g = (Double(reader.byte()) / 255 * 2 - 1) * degrees
            var longitude = center.longitude + g
            if longitude > 180 { longitude -= 360 }
            if longitude < -180 { longitude += 360 }
            if let p = try? GeoPoint(latitude: min(90, max(-90, center.latitude + f)), longitude: min(180, max(-180, longitude))) {
                points.append(p)
            }
        }
        while !reader.atEnd, let p = reader.point() { points.append(p) }
        checkCovering(circle, maxRanges: maxRanges, points: points, input: input)
    default:
        // A byte picks free rings or a star-shaped polygon. Free rings: byte n (rings, 1…3), then
        // for each a byte (points, 0…7), a byte (bit 0 set: leave the ring open), the points. They
        // may cross themselves or each other, which `GeoPolygon` expects not and does not check:
        // their covering is checked, containment is only run. A star-shaped polygon is a simple
        // ring (see `starRings`), so its containment is checked against the covering too.
        var rings: [[GeoPoint]] = []
        let star = reader.byte() & 1 == 1
        if star {
            guard let made = starRings(&reader) else { return 0 }
            rings = made
        } else {
            let ringCount = 1 + Int(reader.byte() % 3)
            for _ in 0..<ringCount {
                let count = Int(reader.byte() % 8)
                let close = reader.byte() & 1 == 0
                var ring: [GeoPoint] = []
                for _ in 0..<count {
                    guard let p = reader.point() else { return 0 }
                    ring.append(p)
                }
                if close, let first = ring.first { ring.append(first) }
                rings.append(ring)
            }
        }
        guard let polygon = build("GeoPolygon(outerRing: \(rings[0]), holes: \(rings.dropFirst()))", {
            try GeoPolygon(outerRing: rings[0], holes: Array(rings.dropFirst()))
        }) else { return 0 }
        precondition(polygon.outerRing == rings[0] && polygon.holes == Array(rings.dropFirst()), "GeoPolygon changed its rings")
        let vertices = rings.flatMap { $0 }
        // Vertices closer than the ring's reference point is to its longest edge (at most 1e-9
        // rad) make a ring degenerate, as documented: its containment is then not to be relied
        // on. Only polygons whose distinct vertices are all 1e-7 rad apart (about 600 m) are checked.
        for (index, a) in vertices.enumerated() {
            for b in vertices[(index + 1)...] where a != b && a.distance(to: b).radians < 1e-7 { return 0 }
        }
        points += vertices
        for (a, b) in zip(vertices, vertices.dropFirst()) {
            if let p = between(a, b, Double(reader.byte()) / 255) { points.append(p) }
        }
        let outer = rings[0]
        let centroid = outer.dropLast().map(vector).reduce((0.0, 0.0, 0.0)) { ($0.0 + $1.0, $0.1 + $1.1, $0.2 + $1.2) }
        if let p = point(x: centroid.0, y: centroid.1, z: centroid.2) {
            points.append(p)
            for vertex in outer { if let q = between(p, vertex, Double(reader.byte()) / 255) { points.append(q) } }
        }
        while !reader.atEnd, let p = reader.point() { points.append(p) }
        // A hole with a point outside the outer ring is refused (by `build` above); the checks
        // below still keep to points the outer ring holds.
        let outerRing = try? GeoPolygon(outerRing: rings[0])
        checkCovering(polygon, maxRanges: maxRanges, points: points, input: input,
                      also: { star && outerRing?.contains($0) ?? false })
    }
    return 0
}
