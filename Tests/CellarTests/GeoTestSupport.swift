@_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation

/// Random points and shapes for the geo tests, and independent checks written without the
/// library's geometry (plain vectors, acos distances, a gnomonic projection for polygons).
struct GeoRandom {
    var rng: SplitMix64

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    mutating func double(_ range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &rng) }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

    /// A point uniform over the sphere.
    mutating func point() -> GeoPoint {
        let z = double(-1...1)
        return GeoPoint(uncheckedLatitude: asin(z) * 180 / .pi, longitude: double(-180...180))
    }

    /// A point at `distance` radians from `center` in a random direction.
    mutating func point(near center: GeoPoint, distance: Double) -> GeoPoint {
        GeoTestMath.destination(center, bearing: double(0...(2 * .pi)), distance: distance)
    }
}

enum GeoTestMath {
    static func vector(_ p: GeoPoint) -> (Double, Double, Double) {
        let phi = p.latitude * .pi / 180, lambda = p.longitude * .pi / 180
        return (cos(phi) * cos(lambda), cos(phi) * sin(lambda), sin(phi))
    }

    static func point(_ v: (Double, Double, Double)) -> GeoPoint {
        let n = (v.0 * v.0 + v.1 * v.1 + v.2 * v.2).squareRoot()
        let lat = asin(max(-1, min(1, v.2 / n))) * 180 / .pi
        let lon = atan2(v.1, v.0) * 180 / .pi
        return GeoPoint(uncheckedLatitude: max(-90, min(90, lat)), longitude: max(-180, min(180, lon)))
    }

    /// Central angle from the chord between the two unit vectors (an independent formula,
    /// precise for small angles, to about 1e-8 radians near π).
    static func angle(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let u = vector(a), v = vector(b)
        let dx = u.0 - v.0, dy = u.1 - v.1, dz = u.2 - v.2
        return 2 * asin(min(1, (dx * dx + dy * dy + dz * dz).squareRoot() / 2))
    }

    /// The point `distance` radians from `start` along initial `bearing` (radians from north).
    static func destination(_ start: GeoPoint, bearing: Double, distance: Double) -> GeoPoint {
        let phi = start.latitude * .pi / 180, lambda = start.longitude * .pi / 180
        let phi2 = asin(sin(phi) * cos(distance) + cos(phi) * sin(distance) * cos(bearing))
        let lambda2 = lambda + atan2(sin(bearing) * sin(distance) * cos(phi), cos(distance) - sin(phi) * sin(phi2))
        var lon = lambda2 * 180 / .pi
        lon = (lon + 540).truncatingRemainder(dividingBy: 360) - 180
        return GeoPoint(uncheckedLatitude: max(-90, min(90, phi2 * 180 / .pi)), longitude: max(-180, min(180, lon)))
    }

    /// Whether `p` is in the box, by longitudes measured eastward from the left edge.
    static func boxContains(south: Double, north: Double, west: Double, east: Double, _ p: GeoPoint) -> Bool {
        guard south <= p.latitude, p.latitude <= north else { return false }
        if abs(p.latitude) == 90 { return true }
        let width = west == -180 && east == 180 ? 360 : (east - west + 360).truncatingRemainder(dividingBy: 360)
        let offset = (p.longitude - west + 360).truncatingRemainder(dividingBy: 360)
        return offset <= width
    }

    /// A star-shaped ring around `center`: `count` vertices at sorted bearings, each at a random
    /// distance in `radii` (radians); closed.
    static func starRing(center: GeoPoint, radii: ClosedRange<Double>, count: Int, random: inout GeoRandom) -> [GeoPoint] {
        var bearings = (0..<count).map { Double($0) / Double(count) * 2 * .pi + random.double(0...(1.5 / Double(count))) }
        bearings.sort()
        if random.int(0...1) == 1 { bearings.reverse() }   // either orientation
        var ring = bearings.map { destination(center, bearing: $0, distance: random.double(radii)) }
        ring.append(ring[0])
        return ring
    }

    /// Gnomonic projection around `center` (geodesics become straight lines): the plane
    /// coordinates, or nil for points in the far hemisphere.
    static func project(_ p: GeoPoint, center: GeoPoint) -> (Double, Double)? {
        let c = vector(center), v = vector(p)
        let w = c.0 * v.0 + c.1 * v.1 + c.2 * v.2
        guard w > 1e-9 else { return nil }
        // East and north unit vectors at the center.
        let lambda = center.longitude * .pi / 180, phi = center.latitude * .pi / 180
        let east = (-sin(lambda), cos(lambda), 0.0)
        let north = (-sin(phi) * cos(lambda), -sin(phi) * sin(lambda), cos(phi))
        let x = (east.0 * v.0 + east.1 * v.1 + east.2 * v.2) / w
        let y = (north.0 * v.0 + north.1 * v.1 + north.2 * v.2) / w
        return (x, y)
    }

    /// Planar ray casting in the gnomonic plane: nil when `p` is too near an edge to call.
    static func ringContains(_ ring: [GeoPoint], center: GeoPoint, _ p: GeoPoint) -> Bool? {
        guard let q = project(p, center: center) else { return false }
        let pts = ring.map { project($0, center: center)! }
        var inside = false
        for k in 0..<(pts.count - 1) {
            let a = pts[k], b = pts[k + 1]
            // Distance to the segment, to skip points too near the boundary.
            let dx = b.0 - a.0, dy = b.1 - a.1
            let t = max(0, min(1, ((q.0 - a.0) * dx + (q.1 - a.1) * dy) / (dx * dx + dy * dy)))
            let ex = a.0 + t * dx - q.0, ey = a.1 + t * dy - q.1
            // The library counts points within `GeoPolygon.edgeTolerance` of an edge as on it
            // (contained): closer than twice that, the check does not call (the projection
            // stretches distances by up to 1 + r² at r from the center).
            let band = 2 * GeoPolygon.edgeTolerance * (1 + q.0 * q.0 + q.1 * q.1)
            if (ex * ex + ey * ey).squareRoot() < 1e-9 * (dx * dx + dy * dy).squareRoot() + band { return nil }
            if (a.1 > q.1) != (b.1 > q.1) {
                let x = a.0 + (q.1 - a.1) / (b.1 - a.1) * (b.0 - a.0)
                if q.0 < x { inside.toggle() }
            }
        }
        return inside
    }
}
