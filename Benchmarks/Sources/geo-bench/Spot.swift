import Cellar

// The geospatial benchmark's `Spot` as an app declares it; its binding and `model-geo-bench.json`
// come from cellar-generator (run from the repository's root after changing this entity; see
// Benchmarks/README.md, "Generated bindings").

final class Spot: Entity {
    var id: Id = 0
    /// The point, with the geo index: `isWithin` reads the index cells covering the shape.
    // cellar: index = "geo"
    var location: GeoPoint = try! GeoPoint(latitude: 0, longitude: 0)
    /// The same point without an index: `isWithin` on it checks every object's point.
    var plain: GeoPoint = try! GeoPoint(latitude: 0, longitude: 0)
    /// `k % 100` for the k-th point put (0-based): a small payload beside the points.
    var group: Int = 0

    required init() {}

    init(_ point: GeoPoint, group: Int) {
        location = point
        plain = point
        self.group = group
    }
}
