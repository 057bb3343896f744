#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The cells of the spatial index: every point of the globe has one 64-bit cell id, and a shape
/// is covered by a few ranges of cell ids holding the cells of all its points.
///
/// **Scheme: a cube projection with a Z-order curve on each face** (the idea of S2, in a simpler
/// form). A point, as a unit vector, goes to the face of the enclosing cube its largest
/// coordinate points at (six faces: ±x, ±y, ±z, the z faces centered on the poles), and is
/// projected from the sphere's center onto that face (gnomonic projection, so the face
/// coordinates u, v are in -1...1 and every line of constant u or v is a great circle). Each face
/// coordinate is evened out with `s = atan(u)·4/π` (cells then differ in area by a factor below
/// 1.5 across a face, where plain u would make them differ by 5) and quantized to 30 bits.
/// The id is `face << 60 | morton(i, j)`: the face (0...5) in bits 60...62 and the two 30-bit
/// coordinates interleaved below (bit 63 is always 0). A cell at level L (0...30) is the square
/// of a face's 2^L × 2^L grid; its points have exactly the ids of one contiguous range, which is
/// why coverings are ranges.
///
/// **Why this scheme.** A latitude/longitude grid has cells that shrink to slivers at the poles
/// and a seam at the antimeridian: shapes there need many ranges or coarse ones. On the cube, a
/// pole is the center of a face and the antimeridian the middle of the -x face, both ordinary
/// places; cells are nearly square and of nearly equal area everywhere, so a covering's size
/// depends on the shape alone. The cube has seams of its own (face edges), but shapes straddling
/// them just take cells on two or three faces. Morton (Z) order rather than Hilbert: a cell at
/// any level is still one id range, and interleaving bits is simpler and cheaper; Hilbert would
/// merge somewhat more neighbouring cells into one range.
///
/// **Precision.** Level-30 cells are about 1.5e-9 radians across, about 9 mm at the face centers
/// and no less than about 6 mm at the face corners. Points closer than that share a cell.
///
/// **Poles and antimeridian.** Nothing special: each pole is inside a face (all longitudes at
/// latitude ±90 map to the same cell), and longitudes -180 and 180 give the same cell.
///
/// **Coverings** are found by refining from the six faces down: cells whose bounding cap misses
/// the shape are dropped, cells inside it are kept whole, the others split into four while the
/// cell budget lasts (four cells per range allowed), then the cells' id ranges are sorted, merged
/// when adjacent, and the smallest gaps closed until at most `maxRanges` remain. Each cell is
/// tested through a cap holding it with a margin of 1e-11 radians, far above the rounding of
/// `cell(of:)`, so a covering is conservative: it holds the cell of every point the shape
/// contains (and some more, which a query checks exactly).
enum GeoCells {
    /// The finest level: cells of a 2^30 × 2^30 grid on each face.
    static let maxLevel = 30
    /// Every cell id, for shapes the index cannot cover more tightly.
    static let allCells: ClosedRange<UInt64> = 0...(6 << 60) - 1
    /// Added to the radius of each cell's cap, to absorb rounding in `cell(of:)` and the tests.
    static let capMargin = 1e-11

    /// A face's center direction and its u and v axes.
    private struct Frame {
        var normal: GeoVector, u: GeoVector, v: GeoVector
    }

    private static let frames: [Frame] = [
        Frame(normal: GeoVector(x: 1, y: 0, z: 0), u: GeoVector(x: 0, y: 1, z: 0), v: GeoVector(x: 0, y: 0, z: 1)),
        Frame(normal: GeoVector(x: 0, y: 1, z: 0), u: GeoVector(x: -1, y: 0, z: 0), v: GeoVector(x: 0, y: 0, z: 1)),
        Frame(normal: GeoVector(x: 0, y: 0, z: 1), u: GeoVector(x: 0, y: 1, z: 0), v: GeoVector(x: -1, y: 0, z: 0)),
        Frame(normal: GeoVector(x: -1, y: 0, z: 0), u: GeoVector(x: 0, y: -1, z: 0), v: GeoVector(x: 0, y: 0, z: 1)),
        Frame(normal: GeoVector(x: 0, y: -1, z: 0), u: GeoVector(x: 1, y: 0, z: 0), v: GeoVector(x: 0, y: 0, z: 1)),
        Frame(normal: GeoVector(x: 0, y: 0, z: -1), u: GeoVector(x: 0, y: 1, z: 0), v: GeoVector(x: 1, y: 0, z: 0)),
    ]

    /// The face a unit vector projects onto: that of its largest coordinate (ties to x, then y).
    static func face(of p: GeoVector) -> Int {
        let ax = abs(p.x), ay = abs(p.y), az = abs(p.z)
        if ax >= ay, ax >= az { return p.x >= 0 ? 0 : 3 }
        if ay >= az { return p.y >= 0 ? 1 : 4 }
        return p.z >= 0 ? 2 : 5
    }

    /// The level-30 cell id of `point`.
    static func cell(of point: GeoPoint) -> UInt64 { cell(of: point.vector) }

    /// The level-30 cell id of the unit vector `p`.
    static func cell(of p: GeoVector) -> UInt64 {
        let f = face(of: p)
        let frame = frames[f]
        let w = p.dot(frame.normal)
        let i = quantize(p.dot(frame.u) / w), j = quantize(p.dot(frame.v) / w)
        return UInt64(f) << 60 | interleave(i, j)
    }

    /// The 30-bit grid coordinate of face coordinate `u` (-1...1).
    private static func quantize(_ u: Double) -> UInt64 {
        let s = atan(u) * (4 / Double.pi)             // -1...1, cells of nearly equal angle
        let t = (s + 1) * Double(1 << (maxLevel - 1))  // 0...2^30
        if !(t > 0) { return 0 }
        return min(UInt64(t), (1 << maxLevel) - 1)
    }

    /// The face coordinate u of grid line `k` of level `level`.
    private static func faceCoordinate(_ k: UInt64, level: Int) -> Double {
        let s = Double(k) / Double(UInt64(1) << level) * 2 - 1
        return tan(s * (Double.pi / 4))
    }

    /// The bits of `i` and `j` (30 each) interleaved, `i`'s in the odd positions.
    static func interleave(_ i: UInt64, _ j: UInt64) -> UInt64 {
        spread(i) << 1 | spread(j)
    }

    /// The low 32 bits of `x` moved to the even bit positions.
    private static func spread(_ x: UInt64) -> UInt64 {
        var x = x & 0xFFFF_FFFF
        x = (x | x << 16) & 0x0000_FFFF_0000_FFFF
        x = (x | x << 8) & 0x00FF_00FF_00FF_00FF
        x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F
        x = (x | x << 2) & 0x3333_3333_3333_3333
        x = (x | x << 1) & 0x5555_5555_5555_5555
        return x
    }

    /// A cell of some level: face, level, and its grid coordinates at that level.
    struct Cell: Sendable, Equatable {
        var face: Int, level: Int, i: UInt64, j: UInt64

        /// The ids of the level-30 cells inside it.
        var range: ClosedRange<UInt64> {
            let shift = UInt64(2 * (GeoCells.maxLevel - level))
            let low = UInt64(face) << 60 | GeoCells.interleave(i, j) << shift
            return low...(low | ((1 << shift) - 1))
        }

        /// The four cells of the next level inside it.
        var children: [Cell] {
            [(0, 0), (0, 1), (1, 0), (1, 1)].map { Cell(face: face, level: level + 1, i: i << 1 | $0.0, j: j << 1 | $0.1) }
        }

        /// A cap holding the cell, with `GeoCells.capMargin` to spare.
        var cap: GeoCap {
            let frame = GeoCells.frames[face]
            func point(_ u: Double, _ v: Double) -> GeoVector { (frame.normal + u * frame.u + v * frame.v).normalized }
            let u0 = GeoCells.faceCoordinate(i, level: level), u1 = GeoCells.faceCoordinate(i + 1, level: level)
            let v0 = GeoCells.faceCoordinate(j, level: level), v1 = GeoCells.faceCoordinate(j + 1, level: level)
            let center = GeoCells.faceCoordinate(2 * i + 1, level: level + 1)
            let middle = GeoCells.faceCoordinate(2 * j + 1, level: level + 1)
            let c = point(center, middle)
            let radius = [point(u0, v0), point(u0, v1), point(u1, v0), point(u1, v1)].map { c.angle(to: $0) }.max()!
            return GeoCap(center: c, radius: radius + GeoCells.capMargin)
        }
    }

    /// Sorted, non-overlapping ranges of cell ids, at most `maxRanges` of them (at least 1), whose
    /// union holds `cell(of: p)` for every point `p` that `shape` contains. Shapes of types other
    /// than Cellar's get `allCells`.
    ///
    /// More ranges make tighter coverings (fewer candidates to check) and more index seeks; 8 to
    /// 32 suit most queries.
    static func covering(_ shape: some GeoShape, maxRanges: Int) -> [ClosedRange<UInt64>] {
        let maxRanges = max(1, maxRanges)
        guard shape is any GeoCoverable else { return [allCells] }
        let budget = max(6, 4 * maxRanges)
        var kept: [Cell] = []
        var frontier: [Cell] = []
        for face in 0..<6 {
            let cell = Cell(face: face, level: 0, i: 0, j: 0)
            switch shape.capRelation(cell.cap) {
            case .disjoint: break
            case .inside: kept.append(cell)
            case .intersects: frontier.append(cell)
            }
        }
        while !frontier.isEmpty {
            var next: [Cell] = []
            for (index, cell) in frontier.enumerated() {
                let remaining = frontier.count - index - 1
                guard cell.level < maxLevel, kept.count + next.count + remaining + 4 <= budget else {
                    kept.append(cell)
                    continue
                }
                for child in cell.children {
                    switch shape.capRelation(child.cap) {
                    case .disjoint: break
                    case .inside: kept.append(child)
                    case .intersects: next.append(child)
                    }
                }
            }
            frontier = next
        }
        return mergedRanges(kept.map(\.range), maxRanges: maxRanges)
    }

    /// `ranges` sorted, adjacent ones joined, and the smallest gaps closed until at most
    /// `maxRanges` remain.
    static func mergedRanges(_ ranges: [ClosedRange<UInt64>], maxRanges: Int) -> [ClosedRange<UInt64>] {
        var merged: [ClosedRange<UInt64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            // Cell ids stay below 6 << 60: `+ 1` cannot overflow.
            if let last = merged.last, range.lowerBound <= last.upperBound + 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        guard merged.count > maxRanges else { return merged }
        // Close the (count − maxRanges) smallest gaps.
        let gaps = (1..<merged.count).sorted {
            merged[$0].lowerBound - merged[$0 - 1].upperBound < merged[$1].lowerBound - merged[$1 - 1].upperBound
        }
        let closed = Set(gaps.prefix(merged.count - maxRanges))
        var result: [ClosedRange<UInt64>] = [merged[0]]
        for index in 1..<merged.count {
            if closed.contains(index) {
                result[result.count - 1] = result[result.count - 1].lowerBound...merged[index].upperBound
            } else {
                result.append(merged[index])
            }
        }
        return result
    }
}
