#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A region of the Earth's surface that a geospatial query matches points against: `GeoBox`,
/// `GeoCircle` or `GeoPolygon`.
///
/// The shapes of Cellar also tell the spatial index which cells they may touch (an internal
/// requirement). A shape of another type still works in a query, by `contains(_:)` alone, but its
/// index covering is the whole globe.
public protocol GeoShape: Sendable {
    /// True when `point` lies in the shape (its boundary included, as each shape documents).
    func contains(_ point: GeoPoint) -> Bool
}

/// How a spherical cap relates to a shape; only `.disjoint` must be exact-or-conservative (never
/// said of a cap that holds a point of the shape).
enum GeoCapRelation: Sendable, Equatable {
    /// No point of the cap is in the shape.
    case disjoint
    /// Every point of the cap is in the shape (may be said `.intersects` instead).
    case inside
    /// Anything else: the cap may hold points in and out of the shape.
    case intersects
}

/// A spherical cap: the points within `radius` radians of the unit vector `center`.
struct GeoCap: Sendable {
    var center: GeoVector
    var radius: Double

    /// The latitude/longitude rectangle holding the cap.
    var boundingRect: GeoRect {
        let phi = center.latitudeRadians
        let south = phi - radius, north = phi + radius
        if south <= -Double.pi / 2 || north >= Double.pi / 2 || radius >= Double.pi / 2 {
            return GeoRect(south: max(south, -Double.pi / 2), north: min(north, Double.pi / 2), west: -Double.pi, east: Double.pi)
        }
        let ratio = sin(radius) / cos(phi)
        if ratio >= 1 { return GeoRect(south: south, north: north, west: -Double.pi, east: Double.pi) }
        let half = asin(ratio), lambda = center.longitudeRadians
        var west = lambda - half, east = lambda + half
        if west < -Double.pi { west += 2 * Double.pi }
        if east > Double.pi { east -= 2 * Double.pi }
        return GeoRect(south: south, north: north, west: west, east: east)
    }
}

/// A latitude/longitude rectangle in radians; `west > east` means it crosses the antimeridian,
/// and `west == -π, east == π` is every longitude.
struct GeoRect: Sendable, Equatable {
    var south: Double, north: Double, west: Double, east: Double

    /// Every latitude and longitude.
    static let world = GeoRect(south: -Double.pi / 2, north: Double.pi / 2, west: -Double.pi, east: Double.pi)

    /// True when the point at `latitude` and `longitude` (radians) is in the rectangle, edges
    /// included; poles are in a rectangle reaching their latitude whatever its longitudes.
    func contains(latitude: Double, longitude: Double) -> Bool {
        guard south <= latitude, latitude <= north else { return false }
        if abs(latitude) >= Double.pi / 2 { return true }
        return longitudePieces.contains { $0.contains(longitude) || $0.contains(-longitude) && abs(longitude) == Double.pi }
    }

    /// The longitude intervals without wrap-around (one or two).
    var longitudePieces: [ClosedRange<Double>] {
        west <= east ? [west...east] : [west...Double.pi, -Double.pi...east]
    }

    func intersects(_ other: GeoRect) -> Bool {
        guard south <= other.north, other.south <= north else { return false }
        for a in longitudePieces {
            for b in other.longitudePieces where a.overlaps(b) { return true }
        }
        // -π and π are one meridian.
        let touchesAntimeridian = { (r: GeoRect) in r.longitudePieces.contains { $0.lowerBound <= -Double.pi || $0.upperBound >= Double.pi } }
        return touchesAntimeridian(self) && touchesAntimeridian(other)
    }

    func contains(_ other: GeoRect) -> Bool {
        guard south <= other.south, other.north <= north else { return false }
        let mine = longitudePieces
        return other.longitudePieces.allSatisfy { piece in mine.contains { $0.lowerBound <= piece.lowerBound && piece.upperBound <= $0.upperBound } }
    }
}

/// The requirements the spatial index needs of a shape, met by Cellar's shapes.
protocol GeoCoverable: GeoShape {
    /// How the cap relates to the shape: `.disjoint` only when no point of the cap is in it.
    func relation(to cap: GeoCap) -> GeoCapRelation
    /// A latitude/longitude rectangle holding every point of the shape.
    var boundingRect: GeoRect { get }
}

extension GeoShape {
    /// The relation of `cap` to the shape; `.intersects` for shapes that are not `GeoCoverable`.
    func capRelation(_ cap: GeoCap) -> GeoCapRelation {
        (self as? any GeoCoverable)?.relation(to: cap) ?? .intersects
    }

    /// A latitude/longitude rectangle (radians) holding every point of the shape: exact for a
    /// box, the cap's rectangle for a circle, that of a cap around the outer ring for a polygon,
    /// and `GeoRect.world` for shapes that are not `GeoCoverable`.
    var latitudeLongitudeBounds: GeoRect {
        (self as? any GeoCoverable)?.boundingRect ?? .world
    }
}

/// A latitude/longitude rectangle: the points whose latitude is between the bottom and top
/// latitudes and whose longitude is between the left and right longitudes, going east from left.
/// Its edges are parallels and meridians (not great-circle arcs), as in Realm's `GeoBox`.
///
/// When `bottomLeft.longitude > topRight.longitude` the box crosses the antimeridian (from the
/// left longitude east to 180°, then from -180° to the right longitude). Equal left and right
/// longitudes make a box one meridian wide; left -180 and right 180 make it go all around.
/// The boundary belongs to the box; a pole belongs to a box that reaches its latitude, whatever
/// the longitudes, and longitudes -180 and 180 are the same meridian.
public struct GeoBox: GeoShape, GeoCoverable, Hashable {
    /// The south-west corner.
    public let bottomLeft: GeoPoint
    /// The north-east corner.
    public let topRight: GeoPoint

    /// The box from `bottomLeft` (south-west) to `topRight` (north-east).
    ///
    /// - Throws: `CellarError.illegalArgument` when `bottomLeft.latitude > topRight.latitude`.
    public init(bottomLeft: GeoPoint, topRight: GeoPoint) throws {
        guard bottomLeft.latitude <= topRight.latitude else {
            throw CellarError.illegalArgument(
                "GeoBox bottom latitude \(bottomLeft.latitude) is north of top latitude \(topRight.latitude); the bottom latitude must be in -90...\(topRight.latitude)")
        }
        self.bottomLeft = bottomLeft
        self.topRight = topRight
    }

    /// True when the box crosses the antimeridian (left longitude east of the right one).
    public var crossesAntimeridian: Bool { bottomLeft.longitude > topRight.longitude }

    /// True when `point` is in the box, its edges included.
    public func contains(_ point: GeoPoint) -> Bool {
        guard bottomLeft.latitude <= point.latitude, point.latitude <= topRight.latitude else { return false }
        if abs(point.latitude) == 90 { return true }
        return containsLongitude(point.longitude) || (abs(point.longitude) == 180 && containsLongitude(-point.longitude))
    }

    private func containsLongitude(_ longitude: Double) -> Bool {
        crossesAntimeridian
            ? longitude >= bottomLeft.longitude || longitude <= topRight.longitude
            : bottomLeft.longitude <= longitude && longitude <= topRight.longitude
    }

    var boundingRect: GeoRect {
        let d = GeoDistance.radiansPerDegree
        let (west, east) = (bottomLeft.longitude * d, topRight.longitude * d)
        // A box crossing the antimeridian by less than the rounding to radians goes nearly all
        // around the globe; its two longitudes may round to one: then every longitude.
        if crossesAntimeridian && west <= east {
            return GeoRect(south: bottomLeft.latitude * d, north: topRight.latitude * d, west: -Double.pi, east: Double.pi)
        }
        return GeoRect(south: bottomLeft.latitude * d, north: topRight.latitude * d, west: west, east: east)
    }

    func relation(to cap: GeoCap) -> GeoCapRelation {
        let box = boundingRect, capRect = cap.boundingRect
        // A box touching a pole holds the pole, whatever its longitudes.
        if box.north >= Double.pi / 2 - 1e-15, capRect.north >= Double.pi / 2 - 1e-15 { return .intersects }
        if box.south <= -Double.pi / 2 + 1e-15, capRect.south <= -Double.pi / 2 + 1e-15 { return .intersects }
        if !box.intersects(capRect) { return .disjoint }
        return box.contains(capRect) ? .inside : .intersects
    }
}

/// The points within a great-circle distance of a center (a spherical cap), the boundary
/// included. Circles holding a pole or crossing the antimeridian are no different from others.
public struct GeoCircle: GeoShape, GeoCoverable, Hashable {
    /// The center.
    public let center: GeoPoint
    /// The radius, in 0...π radians (π is the whole globe).
    public let radius: GeoDistance

    /// The circle of `radius` around `center`.
    ///
    /// - Throws: `CellarError.illegalArgument` when the radius is negative, NaN, or more than π
    ///   radians (half the Earth's circumference, about 20,015 km).
    public init(center: GeoPoint, radius: GeoDistance) throws {
        guard radius.radians >= 0, radius.radians <= Double.pi else {
            throw CellarError.illegalArgument(
                "GeoCircle radius \(radius.radians) radians (\(radius.kilometers) km) is outside 0...π radians (0...\(Double.pi * GeoDistance.earthRadiusKilometers) km)")
        }
        self.center = center
        self.radius = radius
    }

    /// The circle of `radiusInKilometers` around `center`.
    ///
    /// - Throws: `CellarError.illegalArgument` when the radius is negative, NaN, or more than
    ///   half the Earth's circumference (about 20,015 km).
    public init(center: GeoPoint, radiusInKilometers: Double) throws {
        try self.init(center: center, radius: .kilometers(radiusInKilometers))
    }

    /// The circle of `radiusKilometers` around `center`, for use right inside a query's
    /// condition: it does not throw, and a radius that is negative, NaN or above half the Earth's
    /// circumference makes the query throw `CellarError.illegalArgument` when it is built.
    public init(center: GeoPoint, radiusKilometers: Double) {
        self.center = center
        radius = .kilometers(radiusKilometers)
    }

    /// The circle of `radiusRadians` (an angle at the Earth's center) around `center`; like
    /// ``init(center:radiusKilometers:)``, checked when the query is built.
    public init(center: GeoPoint, radiusRadians: Double) {
        self.center = center
        radius = .radians(radiusRadians)
    }

    /// Why the circle cannot be used in a query (a radius out of range), or nil.
    var problem: String? {
        radius.radians >= 0 && radius.radians <= Double.pi ? nil
            : "GeoCircle radius \(radius.radians) radians (\(radius.kilometers) km) is outside 0...π radians (0...\(Double.pi * GeoDistance.earthRadiusKilometers) km)"
    }

    /// True when the great-circle distance from the center to `point` is at most the radius.
    public func contains(_ point: GeoPoint) -> Bool {
        center.distance(to: point) <= radius
    }

    /// The rectangle of the cap, widened by 1e-12 radians against rounding.
    var boundingRect: GeoRect { GeoCap(center: center.vector, radius: radius.radians + 1e-12).boundingRect }

    func relation(to cap: GeoCap) -> GeoCapRelation {
        let d = center.vector.angle(to: cap.center)
        // Rounding of the two distance computations is far below this margin.
        let margin = 1e-12
        if d > radius.radians + cap.radius + margin { return .disjoint }
        return d + cap.radius < radius.radians - margin ? .inside : .intersects
    }
}
