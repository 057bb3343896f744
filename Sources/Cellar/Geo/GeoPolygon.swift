#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A polygon on the sphere: an outer ring, minus the regions of its holes. Edges are
/// great-circle arcs (the shortest path between two vertices, as in Realm and S2), not lines of
/// constant latitude: the edge between (10, 0) and (10, 20) passes north of latitude 10.
///
/// **Which side is inside.** A ring splits the sphere in two regions; its inside is the smaller
/// one (area at most a hemisphere), whichever way the ring is ordered (a ring cutting the sphere
/// in equal halves, along a great circle, has the half on its left as inside). So rings around a pole and
/// rings crossing the antimeridian need nothing special: a ring around the north pole at
/// latitude 80 holds the pole. A point is in the polygon when it is inside the outer ring and
/// not strictly inside any hole.
///
/// **Boundary.** The boundary belongs to the polygon: a point on an edge or vertex of the outer
/// ring or of a hole, to within `edgeTolerance` (1e-12 radians, about 6 micrometres), is
/// contained.
///
/// **Method.** Containment in a ring is decided by counting crossings. Each ring keeps a
/// reference point a hair (1e-9 radians, less on tiny edges) to the left of the midpoint of its
/// longest edge, whose side is known: it is inside when the left of the ring is its smaller
/// side, found from the ring's total turning angle (Gauss–Bonnet: the region on the left has area
/// 2π minus the sum of the turning angles). The path from the reference point to the queried
/// point (one arc, or two quarter-circle arcs when the point is far) crosses the ring an odd
/// number of times exactly when the two are on different sides. A vertex exactly on the path's
/// great circle is counted as lying on its left (a half-open rule), so a path through a vertex
/// counts one crossing or two consistently. The tests are sign tests on cross products, exact up
/// to rounding for points not within about 1e-15 radians of an edge.
///
/// Rings are expected not to cross themselves or each other, and holes to lie in the outer ring;
/// this is not checked. Edges closer to each other than the reference point's offset make a ring
/// degenerate.
public struct GeoPolygon: GeoShape, GeoCoverable, Hashable {
    /// The outer ring, closed (its last point is its first).
    public let outerRing: [GeoPoint]
    /// The holes, each a closed ring.
    public let holes: [[GeoPoint]]

    /// Distance in radians within which a point counts as on an edge (and so contained).
    public static let edgeTolerance = 1e-12

    /// The outer ring's geometry, then each hole's.
    private let rings: [SphericalRing]

    /// The polygon with `outerRing` and `holes`.
    ///
    /// - Throws: `CellarError.illegalArgument` when a ring is not closed (first point equal to
    ///   the last), has fewer than 3 distinct points, or has an edge between antipodal points
    ///   (whose great-circle arc is undefined), or a hole has a point outside the outer ring; the
    ///   message names the ring. Rings that cross themselves are not detected: do not use them.
    public init(outerRing: [GeoPoint], holes: [[GeoPoint]] = []) throws {
        var rings = [try SphericalRing(outerRing, name: "the outer ring")]
        for (index, hole) in holes.enumerated() {
            rings.append(try SphericalRing(hole, name: "hole \(index)"))
            // A hole lies inside the outer ring: a point on a hole outside it would count as
            // contained without being in the index's covering of the outer ring.
            if let outside = hole.first(where: { !rings[0].contains($0.vector) && !rings[0].hasEdge(within: Self.edgeTolerance, of: $0.vector) }) {
                throw CellarError.illegalArgument("GeoPolygon hole \(index) has the point \(outside), outside the outer ring; a hole lies inside the outer ring")
            }
        }
        self.outerRing = outerRing
        self.holes = holes
        self.rings = rings
    }

    /// Polygons are equal when their rings are, point by point.
    public static func == (a: GeoPolygon, b: GeoPolygon) -> Bool {
        a.outerRing == b.outerRing && a.holes == b.holes
    }

    /// Hashes the rings' points.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(outerRing)
        hasher.combine(holes)
    }

    /// True when `point` is inside the outer ring and not strictly inside a hole (the boundary is
    /// contained).
    public func contains(_ point: GeoPoint) -> Bool {
        contains(vector: point.vector)
    }

    func contains(vector p: GeoVector) -> Bool {
        for ring in rings where ring.hasEdge(within: Self.edgeTolerance, of: p) { return true }
        guard rings[0].contains(p) else { return false }
        for hole in rings.dropFirst() where hole.contains(p) { return false }
        return true
    }

    var boundingRect: GeoRect { rings[0].boundingRect }

    func relation(to cap: GeoCap) -> GeoCapRelation {
        // The cap may hold a point of the shape only if it is near the outer ring's bounds.
        if !rings[0].boundingCap.mayIntersect(cap) { return .disjoint }
        let reach = cap.radius + Self.edgeTolerance + 1e-12
        for ring in rings where ring.boundingCap.mayIntersect(cap) && ring.hasEdge(within: reach, of: cap.center) {
            return .intersects
        }
        // No boundary in the cap: all of it is on the side of its center.
        return contains(vector: cap.center) ? .inside : .disjoint
    }
}

extension GeoCap {
    /// False only when the two caps are certainly apart.
    func mayIntersect(_ other: GeoCap) -> Bool {
        center.angle(to: other.center) <= radius + other.radius + 1e-12
    }
}

/// A closed ring's vertices as unit vectors, with what containment needs.
struct SphericalRing: Sendable {
    /// The vertices, without the closing repetition and without consecutive duplicates.
    let vertices: [GeoVector]
    /// The unit normal of each edge's great circle (edge k runs from vertex k to the next).
    let edgeNormals: [GeoVector]
    /// The reference point and whether it is inside the ring.
    let reference: GeoVector
    let referenceInside: Bool
    /// A cap holding the ring's inside region and boundary.
    let boundingCap: GeoCap
    /// A latitude/longitude rectangle holding the ring's inside region and boundary.
    let boundingRect: GeoRect

    init(_ points: [GeoPoint], name: String) throws {
        guard let first = points.first, let last = points.last, first == last, points.count >= 2 else {
            throw CellarError.illegalArgument(
                "GeoPolygon \(name) is not closed: its last point must equal its first, and it has \(points.count) points")
        }
        let distinct = Set(points.map(\.vector))
        guard distinct.count >= 3 else {
            throw CellarError.illegalArgument(
                "GeoPolygon \(name) has \(distinct.count) distinct points; a ring needs at least 3 (and the first repeated last)")
        }
        var vertices: [GeoVector] = []
        for point in points.dropLast() {
            let v = point.vector
            if vertices.last != v { vertices.append(v) }
        }
        while vertices.count > 1, vertices.last == vertices.first { vertices.removeLast() }
        for i in vertices.indices {
            let a = vertices[i], b = vertices[(i + 1) % vertices.count]
            if a.cross(b).norm < 1e-15, a.dot(b) < 0 {
                throw CellarError.illegalArgument(
                    "GeoPolygon \(name) has an edge between antipodal points (vertex \(i) and the next), whose great-circle arc is undefined; add a vertex between them")
            }
        }
        self.vertices = vertices
        self.edgeNormals = vertices.indices.map { vertices[$0].robustCross(vertices[($0 + 1) % vertices.count]).normalized }

        // Gauss–Bonnet: area on the left = 2π − Σ turning angles.
        var turning = 0.0
        let n = vertices.count
        for i in 0..<n {
            let a = vertices[(i + n - 1) % n], b = vertices[i], c = vertices[(i + 1) % n]
            let n1 = a.robustCross(b), n2 = b.robustCross(c)
            let angle = n1.angle(to: n2)
            turning += n1.dot(c) >= 0 ? angle : -angle
        }
        let leftIsInside = turning >= 0

        // The reference point: beside the midpoint of the longest edge, on its left.
        let longest = vertices.indices.max { vertices[$0].angle(to: vertices[($0 + 1) % n]) < vertices[$1].angle(to: vertices[($1 + 1) % n]) }!
        let v0 = vertices[longest], v1 = vertices[(longest + 1) % n]
        let mid = (v0 + v1).normalized, normal = v0.robustCross(v1).normalized
        let reference = (mid + min(1e-9, 1e-3 * v0.angle(to: v1)) * normal).normalized
        self.reference = reference
        self.referenceInside = leftIsInside

        // Bounding cap: around the vertices' mean direction or its antipode, whichever is
        // inside; the globe when neither is.
        let sum = vertices.reduce(GeoVector(x: 0, y: 0, z: 0), +)
        let mean = sum.norm < 1e-9 ? reference : sum.normalized
        var cap = GeoCap(center: mean, radius: Double.pi)
        let isInside = { (p: GeoVector) in leftIsInside != SphericalRing.crossingParity(vertices: vertices, from: reference, to: p) }
        for center in [mean, -mean] where isInside(center) {
            // The region holds `center`; unless it also holds the antipode, its farthest point
            // from the center is on the boundary.
            if isInside(-center) { break }
            var radius = 0.0
            for i in 0..<n {
                radius = max(radius, SphericalRing.farthestDistance(from: center, vertices[i], vertices[(i + 1) % n]))
            }
            cap = GeoCap(center: center, radius: min(Double.pi, radius + 1e-12))
            break
        }
        self.boundingCap = cap
        self.boundingRect = cap.boundingRect
    }

    /// True when `p` is inside the ring (points within rounding of an edge may go either way).
    func contains(_ p: GeoVector) -> Bool {
        referenceInside != Self.crossingParity(vertices: vertices, from: reference, to: p)
    }

    /// True when an edge passes within `distance` radians of `p`.
    func hasEdge(within distance: Double, of p: GeoVector) -> Bool {
        // An edge's great circle farther than `distance` rules the edge out with one product.
        let bound = distance >= Double.pi / 2 ? 2.0 : sin(distance) * (1 + 1e-12) + 1e-15
        for k in vertices.indices where abs(p.dot(edgeNormals[k])) <= bound {
            if Self.distanceToArc(p, vertices[k], vertices[k + 1 == vertices.count ? 0 : k + 1]) <= distance { return true }
        }
        return false
    }

    /// The distance in radians from `p` to the minor great-circle arc from `a` to `b`.
    static func distanceToArc(_ p: GeoVector, _ a: GeoVector, _ b: GeoVector) -> Double {
        let n = a.robustCross(b)
        let nn = n.norm
        if nn > 0 {
            let unit = (1 / nn) * n
            let q = p - p.dot(unit) * unit
            if q.norm > 1e-300, a.cross(q).dot(n) >= 0, q.cross(b).dot(n) >= 0 {
                return abs(asin(max(-1, min(1, p.dot(unit)))))
            }
        }
        return min(p.angle(to: a), p.angle(to: b))
    }

    /// An upper bound of the distance from `c` to the points of the arc from `a` to `b`.
    static func farthestDistance(from c: GeoVector, _ a: GeoVector, _ b: GeoVector) -> Double {
        // The farthest point of an arc from c is an endpoint or the point of the arc nearest −c.
        let toAntipode = distanceToArc(-c, a, b)
        return max(c.angle(to: a), c.angle(to: b), Double.pi - toAntipode)
    }

    /// True when the path from `start` to `end` crosses the ring an odd number of times. Far
    /// points are reached through a point a quarter circle from both.
    static func crossingParity(vertices: [GeoVector], from start: GeoVector, to end: GeoVector) -> Bool {
        if start.dot(end) >= 0 {
            return arcCrossingParity(vertices: vertices, from: start, to: end)
        }
        var middle = start.cross(end)
        if middle.norm < 1e-6 {
            let axis = abs(start.x) < 0.5 ? GeoVector(x: 1, y: 0, z: 0) : GeoVector(x: 0, y: 1, z: 0)
            middle = start.cross(axis)
        }
        middle = middle.normalized
        return arcCrossingParity(vertices: vertices, from: start, to: middle)
            != arcCrossingParity(vertices: vertices, from: middle, to: end)
    }

    /// The parity of the crossings of the ring by the arc from `a` to `b` (at most a quarter
    /// circle or so): a crossing at `a` is not counted, one at `b` is.
    static func arcCrossingParity(vertices: [GeoVector], from a: GeoVector, to b: GeoVector) -> Bool {
        let n = a.robustCross(b)
        var odd = false
        let count = vertices.count
        var c = vertices[count - 1]
        var sc = c.dot(n)
        for d in vertices {
            let sd = d.dot(n)
            // Half-open: a vertex on the great circle counts as on its left.
            if (sc >= 0) != (sd >= 0) {
                // The point of the edge on the great circle, as a positive combination of c and d.
                let y = sc < 0 ? (sd * c - sc * d) : (sc * d - sd * c)
                if a.cross(y).dot(n) > 0, y.cross(b).dot(n) >= 0 { odd.toggle() }
            }
            c = d
            sc = sd
        }
        return odd
    }
}
