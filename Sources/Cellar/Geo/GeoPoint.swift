import CellarStorage
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A point on the Earth's surface: a latitude and a longitude in degrees (WGS 84 style
/// coordinates, on a spherical Earth model).
///
/// Latitude is in -90...90 (north positive), longitude in -180...180 (east positive). Longitudes
/// -180 and 180 name the same meridian, and every longitude at latitude ±90 names the same pole:
/// the shapes treat them so, although `==` compares the stored numbers.
///
/// ```swift
/// let paris = try GeoPoint(latitude: 48.8566, longitude: 2.3522)
/// let london = try GeoPoint(latitude: 51.5074, longitude: -0.1278)
/// print(paris.distance(to: london).kilometers)   // about 343.5
/// ```
public struct GeoPoint: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Degrees north of the equator, in -90...90.
    public let latitude: Double
    /// Degrees east of the Greenwich meridian, in -180...180.
    public let longitude: Double

    /// A point at `latitude` (-90...90) and `longitude` (-180...180), in degrees.
    ///
    /// - Throws: `CellarError.illegalArgument` when a coordinate is outside its range, NaN or
    ///   infinite.
    public init(latitude: Double, longitude: Double) throws {
        guard latitude.isFinite, (-90.0...90.0).contains(latitude) else {
            throw CellarError.illegalArgument("GeoPoint latitude \(latitude) is outside -90...90 degrees")
        }
        guard longitude.isFinite, (-180.0...180.0).contains(longitude) else {
            throw CellarError.illegalArgument("GeoPoint longitude \(longitude) is outside -180...180 degrees")
        }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// A point from coordinates known to be in range (stored data that was checked, constants):
    /// no check is made.
    @_spi(Testing) public init(uncheckedLatitude latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The great-circle distance to `other` on the spherical Earth.
    ///
    /// Computed with the haversine formula in the form `2·atan2(√a, √(1−a))`, where both `a` and
    /// `1 − a` are computed directly as sums of squared sines (`1 − a` is the haversine of the
    /// distance to `other`'s antipode): accurate to rounding for tiny distances and for nearly
    /// antipodal points alike.
    public func distance(to other: GeoPoint) -> GeoDistance {
        .radians(Self.angle(latitude, longitude, other.latitude, other.longitude))
    }

    /// The central angle in radians between two points given in degrees (see `distance(to:)`).
    static func angle(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let phi1 = lat1 * GeoDistance.radiansPerDegree, phi2 = lat2 * GeoDistance.radiansPerDegree
        let dLambda = (lon2 - lon1) * GeoDistance.radiansPerDegree
        let cosProduct = cos(phi1) * cos(phi2)
        let sinHalfDPhi = sin((phi2 - phi1) / 2), sinHalfSumPhi = sin((phi1 + phi2) / 2)
        let sinHalfDLambda = sin(dLambda / 2), cosHalfDLambda = cos(dLambda / 2)
        let a = sinHalfDPhi * sinHalfDPhi + cosProduct * sinHalfDLambda * sinHalfDLambda
        let b = sinHalfSumPhi * sinHalfSumPhi + cosProduct * cosHalfDLambda * cosHalfDLambda
        return 2 * atan2(max(a, 0).squareRoot(), max(b, 0).squareRoot())
    }

    /// `GeoPoint(latitude: …, longitude: …)`.
    public var description: String { "GeoPoint(latitude: \(latitude), longitude: \(longitude))" }

    // MARK: Codable (checked)

    private enum CodingKeys: String, CodingKey { case latitude, longitude }

    /// Decodes `latitude` and `longitude`, refusing values out of range like `init(latitude:longitude:)`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let latitude = try container.decode(Double.self, forKey: .latitude)
        let longitude = try container.decode(Double.self, forKey: .longitude)
        do {
            try self.init(latitude: latitude, longitude: longitude)
        } catch let error as CellarError {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    /// Encodes `latitude` and `longitude` as two numbers.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(latitude, forKey: .latitude)
        try container.encode(longitude, forKey: .longitude)
    }

    // MARK: Record encoding

    /// The bytes of a point in a record: latitude then longitude, each a little-endian Float64.
    static let encodedSize = 16

    /// Writes the point's `encodedSize` bytes at the start of `buffer` (which must hold them).
    func encode(into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= Self.encodedSize, "a GeoPoint needs \(Self.encodedSize) bytes")
        buffer.storeBytes(of: latitude.bitPattern.littleEndian, toByteOffset: 0, as: UInt64.self)
        buffer.storeBytes(of: longitude.bitPattern.littleEndian, toByteOffset: 8, as: UInt64.self)
    }

    /// Reads a point written by `encode(into:)` from the start of `bytes`.
    ///
    /// - Throws: `CellarError.fileCorrupt` when fewer than `encodedSize` bytes are given or a
    ///   stored coordinate is out of range, NaN or infinite.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> GeoPoint {
        guard bytes.count >= encodedSize else {
            throw CellarError.fileCorrupt("a stored GeoPoint has \(bytes.count) bytes, \(encodedSize) expected")
        }
        let latitude = Double(bitPattern: bytes.loadLE(UInt64.self, at: 0))
        let longitude = Double(bitPattern: bytes.loadLE(UInt64.self, at: 8))
        guard latitude.isFinite, (-90.0...90.0).contains(latitude), longitude.isFinite, (-180.0...180.0).contains(longitude) else {
            throw CellarError.fileCorrupt("a stored GeoPoint has latitude \(latitude) and longitude \(longitude); latitude must be in -90...90 and longitude in -180...180")
        }
        return GeoPoint(uncheckedLatitude: latitude, longitude: longitude)
    }

    // MARK: Geometry

    /// The point as a unit vector: x towards (0, 0), y towards (0, 90° E), z towards the north pole.
    /// Exact at the poles whatever the longitude, and the same for longitudes -180 and 180 (the
    /// trigonometric functions would leave residues of about 1e-16 there, on cell boundaries).
    var vector: GeoVector {
        if abs(latitude) == 90 { return GeoVector(x: 0, y: 0, z: latitude > 0 ? 1 : -1) }
        let phi = latitude * GeoDistance.radiansPerDegree, cosPhi = cos(phi)
        if abs(longitude) == 180 { return GeoVector(x: -cosPhi, y: 0, z: sin(phi)) }
        let lambda = longitude * GeoDistance.radiansPerDegree
        return GeoVector(x: cosPhi * cos(lambda), y: cosPhi * sin(lambda), z: sin(phi))
    }
}

/// A distance on the Earth's surface, stored as the central angle in radians on the unit sphere.
///
/// Converted to lengths with the Earth's mean radius, `GeoDistance.earthRadiusKilometers`
/// (6371.0088 km, the IUGG mean radius R₁): lengths are those of the spherical model, within
/// about 0.5 % of the ellipsoidal (geodesic) distance.
public struct GeoDistance: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The Earth's mean radius in kilometres (IUGG mean radius R₁), used for every length conversion.
    public static let earthRadiusKilometers = 6371.0088
    /// Kilometres in an international mile.
    static let kilometersPerMile = 1.609344
    static let radiansPerDegree = Double.pi / 180

    /// The central angle in radians.
    public let radians: Double

    private init(radians: Double) { self.radians = radians }

    /// A distance of `kilometers` on the Earth's surface.
    public static func kilometers(_ kilometers: Double) -> GeoDistance { GeoDistance(radians: kilometers / earthRadiusKilometers) }
    /// A distance of `meters` on the Earth's surface.
    public static func meters(_ meters: Double) -> GeoDistance { .kilometers(meters / 1000) }
    /// A distance of `miles` (international miles) on the Earth's surface.
    public static func miles(_ miles: Double) -> GeoDistance { .kilometers(miles * kilometersPerMile) }
    /// A central angle of `radians`.
    public static func radians(_ radians: Double) -> GeoDistance { GeoDistance(radians: radians) }
    /// A central angle of `degrees`.
    public static func degrees(_ degrees: Double) -> GeoDistance { GeoDistance(radians: degrees * radiansPerDegree) }

    /// The distance in kilometres.
    public var kilometers: Double { radians * Self.earthRadiusKilometers }
    /// The distance in metres.
    public var meters: Double { kilometers * 1000 }
    /// The distance in international miles.
    public var miles: Double { kilometers / Self.kilometersPerMile }
    /// The central angle in degrees.
    public var degrees: Double { radians / Self.radiansPerDegree }

    /// Orders distances by length.
    public static func < (a: GeoDistance, b: GeoDistance) -> Bool { a.radians < b.radians }

    /// The distance in kilometres, as `343.55 km`.
    public var description: String { "\(kilometers) km" }
}

/// A vector in 3-space; points of the unit sphere for the geometry of shapes and cells.
struct GeoVector: Sendable, Hashable {
    var x: Double, y: Double, z: Double

    static func + (a: GeoVector, b: GeoVector) -> GeoVector { GeoVector(x: a.x + b.x, y: a.y + b.y, z: a.z + b.z) }
    static func - (a: GeoVector, b: GeoVector) -> GeoVector { GeoVector(x: a.x - b.x, y: a.y - b.y, z: a.z - b.z) }
    static func * (s: Double, a: GeoVector) -> GeoVector { GeoVector(x: s * a.x, y: s * a.y, z: s * a.z) }
    static prefix func - (a: GeoVector) -> GeoVector { GeoVector(x: -a.x, y: -a.y, z: -a.z) }

    func dot(_ b: GeoVector) -> Double { x * b.x + y * b.y + z * b.z }
    func cross(_ b: GeoVector) -> GeoVector {
        GeoVector(x: y * b.z - z * b.y, y: z * b.x - x * b.z, z: x * b.y - y * b.x)
    }
    /// A vector along `self × b` (twice as long) computed as `(self + b) × (b − self)`: its
    /// direction stays accurate when the two are nearly equal, where the plain cross product
    /// would lose it to cancellation (an error of about 1e-16 divided by their distance).
    func robustCross(_ b: GeoVector) -> GeoVector { (self + b).cross(b - self) }
    var norm: Double { dot(self).squareRoot() }
    /// The vector scaled to length 1 (the zero vector stays zero).
    var normalized: GeoVector {
        let n = norm
        return n > 0 ? (1 / n) * self : self
    }
    /// The angle in radians to `b` (both of any nonzero length), accurate for tiny and nearly
    /// opposite vectors alike.
    func angle(to b: GeoVector) -> Double { atan2(cross(b).norm, dot(b)) }

    /// Latitude of the direction, in radians.
    var latitudeRadians: Double { atan2(z, (x * x + y * y).squareRoot()) }
    /// Longitude of the direction, in radians (-π...π).
    var longitudeRadians: Double { atan2(y, x) }
}
