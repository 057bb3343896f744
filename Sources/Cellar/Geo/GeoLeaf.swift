import CellarStorage

/// A geospatial condition (`Place.location.isWithin(circle)`), checked against the store's model:
/// the property is a GeoPoint. On a record it checks the point exactly (`GeoShape.contains`); with
/// a geo index on the property the planner reads the index's cells covering the shape first
/// (`GeoCells.covering`), and checks only the objects in them.
struct GeoLeaf {
    let property: PropertySchema
    let shape: any GeoShape

    /// How many key ranges a covering may have: more ranges hug the shape more closely (fewer
    /// objects to check) and cost more seeks.
    static let maxRanges = 16

    init(_ condition: PropertyCondition, property: PropertySchema) throws {
        guard condition.subject == .value, property.type == .geoPoint else {
            throw CellarError.illegalArgument("query condition \(property.qualifiedName) isWithin: only GeoPoint properties lie within shapes; \(property.name) is a \(property.type)")
        }
        guard let shape = condition.shape else {
            throw CellarError.illegalArgument("query condition \(property.qualifiedName) isWithin: no shape given")
        }
        if let circle = shape as? GeoCircle, let problem = circle.problem {
            throw CellarError.illegalArgument("query condition \(property.qualifiedName) isWithin: \(problem)")
        }
        self.property = property
        self.shape = shape
    }

    /// Whether a stored point (nil: absent) lies in the shape.
    func evaluate(_ value: FieldValue?) throws -> Bool {
        guard case .bytes(let bytes)? = value else { return false }
        return shape.contains(try GeoPoint.decode(bytes))
    }

    /// The index the planner can read, when the property has one.
    var index: IndexSchema? {
        guard let index = property.index, index.kind == .geo else { return nil }
        return index
    }

    /// The ranges of the geo index's keys holding every point the shape contains.
    var keyRanges: [KeyRange] {
        GeoCells.covering(shape, maxRanges: Self.maxRanges).map { cells in
            KeyRange(lower: QueryPlan.bigEndian(cells.lowerBound), upper: QueryPlan.bigEndian(cells.upperBound) + QueryPlan.maxId,
                     upperInclusive: true)
        }
    }
}

extension Property {
    /// A GeoPoint property's point lies within `shape`: a ``GeoBox``, a ``GeoCircle`` or a
    /// ``GeoPolygon``, checked exactly on the sphere (a box's edges follow parallels and
    /// meridians; a circle is every point within its radius by great-circle distance; a polygon's
    /// edges are great-circle arcs). An absent point is within nothing.
    ///
    /// With `// cellar: index = "geo"` on the property the query reads only the objects whose
    /// points lie in the index cells covering the shape; without it, every object's point.
    /// Both give the same results.
    public func isWithin(_ shape: some GeoShape) -> QueryCondition<E> {
        var condition = PropertyCondition(ref, .isWithin, [])
        condition.via = via
        condition.shape = shape
        return QueryCondition(.property(condition))
    }
}

extension CompiledOrder {
    /// An order by the distance of GeoPoint `property` from `point`, nearest first, objects
    /// without a point last.
    init<E>(distanceOf property: Property<E>, from point: GeoPoint, schema: EntitySchema) throws {
        guard property.pathNumber == 0 else {
            throw CellarError.illegalArgument("ordered(byDistanceFrom: \(point), in: \(property)): the property is in an embedded object; order by an entity's own GeoPoint property")
        }
        let schemaProperty = try schema.property(property.id, named: property.name)
        guard schemaProperty.type == .geoPoint else {
            throw CellarError.illegalArgument("ordered(byDistanceFrom: \(point), in: \(property)): the property is a \(schemaProperty.type), not a GeoPoint")
        }
        self.init(property: schemaProperty, flags: .nullsLast)
        distanceFrom = point
    }
}
