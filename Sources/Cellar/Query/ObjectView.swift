import Foundation

/// One matching object's stored record, as `Query.visit` hands it out: reads single properties
/// in place, without building the object. Valid only inside the `visit` closure.
///
/// ```swift
/// try query.visit { note in
///     total += try note.utf8Count(Note.title) ?? 0
///     return true
/// }
/// ```
public struct ObjectView<E: EntityInspectable> {
    /// The object's id.
    @inlinable public var id: Id { currentId }
    @usableFromInline var currentId: Id = 0
    @usableFromInline var record: RecordReader
    /// The store the query runs on (kept alive by the query during `visit`): unretained, so that
    /// a view is copied without reference counting.
    @usableFromInline let store: Unmanaged<Store>

    /// A view on no record yet; `visit` moves one view from record to record.
    @inlinable
    init(store: Store) {
        self.store = .passUnretained(store)
        record = RecordReader(empty: ())
    }

    @inlinable @inline(__always)
    mutating func move(to id: Id, bytes: UnsafeRawBufferPointer) throws {
        currentId = id
        record = try RecordReader(bytes, depth: 0)
    }

    /// The error for a property of an embedded object (`Contact.home.city`): a view reads the
    /// object's own fields. (Reading through the path here, by a view moved to the nested
    /// record, measured a fifth slower on the scan of one field per record: the accessors
    /// stopped being inlined.)
    @usableFromInline
    func throughEmbedded(_ property: Property<E>) -> CellarError {
        CellarError.illegalArgument("\(property) is a property of an embedded object; an ObjectView reads the object's own properties — read the object (`object()`), or use a projection with `// cellar: from = \"\((property.via.map(\.name) + [property.name]).joined(separator: "."))\"`")
    }

    /// The whole object.
    @inlinable
    public func object() throws -> E {
        let binding = E.entityBinding
        let object = try binding.read(id: currentId, from: record)
        if binding.hasRelations { binding.attach(object, id: currentId, store: store.takeUnretainedValue()) }
        return object
    }

    /// A string property's value; nil when absent.
    @inlinable
    public func string(_ property: Property<E>) throws -> String? {
        guard property.pathNumber == 0 else { throw throughEmbedded(property) }
        try check(property, .string)
        return try record.text(slot: property.slot)
    }

    /// The number of UTF-8 bytes of a string property (or of a byte vector); nil when absent.
    @inlinable
    public func utf8Count(_ property: Property<E>) throws -> Int? {
        guard property.pathNumber == 0 else { throw throughEmbedded(property) }
        try check(property, .string, or: .byteVector)
        return try record.field(slot: property.slot)?.count
    }

    /// A string or byte vector property's bytes, in place: valid only inside the `visit` closure.
    @inlinable
    public func bytes(_ property: Property<E>) throws -> UnsafeRawBufferPointer? {
        guard property.pathNumber == 0 else { throw throughEmbedded(property) }
        try check(property, .string, or: .byteVector)
        return try record.field(slot: property.slot)
    }

    /// An integer property's value (also Bool as 0/1, dates in their stored unit, relation ids);
    /// nil when absent. Unsigned values above `Int64.max` come as their bit pattern.
    /// Always inlined: with a generated property the type is a constant and the switch folds away.
    @inlinable @inline(__always)
    public func integer(_ property: Property<E>) throws -> Int64? {
        guard property.pathNumber == 0 else { throw throughEmbedded(property) }
        switch property.type {
        case .long, .date, .dateNano, .relation: return try record.integer(Int64.self, slot: property.slot)
        case .int: return try record.integer(Int32.self, slot: property.slot).map(Int64.init)
        case .bool, .byte: return try record.integer(Int8.self, slot: property.slot).map(Int64.init)
        case .short, .char: return try record.integer(Int16.self, slot: property.slot).map(Int64.init)
        default: throw mismatch(property, "an integer")
        }
    }

    /// A Float or Double property's value; nil when absent.
    public func double(_ property: Property<E>) throws -> Double? {
        guard property.pathNumber == 0 else { throw throughEmbedded(property) }
        switch property.type {
        case .float: return try record.float(slot: property.slot).map(Double.init)
        case .double: return try record.double(slot: property.slot)
        default: throw mismatch(property, "a Float or Double")
        }
    }

    /// A UUID property's value; nil when absent.
    public func uuid(_ property: Property<E>) throws -> UUID? {
        guard property.pathNumber == 0 else { throw throughEmbedded(property) }
        try check(property, .uuid)
        return try record.uuid(slot: property.slot)
    }

    /// A Decimal property's value; nil when absent.
    public func decimal(_ property: Property<E>) throws -> Decimal? {
        guard property.pathNumber == 0 else { throw throughEmbedded(property) }
        try check(property, .decimal)
        return try record.decimal(slot: property.slot)
    }

    /// A Date property's value; nil when absent.
    public func date(_ property: Property<E>) throws -> Date? {
        guard property.pathNumber == 0 else { throw throughEmbedded(property) }
        switch property.type {
        case .date: return try record.date(slot: property.slot)
        case .dateNano: return try record.dateNanoseconds(slot: property.slot)
        default: throw mismatch(property, "a Date")
        }
    }

    /// A list property's elements (e.g. `view.list(Note.tags, of: String.self)`); nil when absent.
    public func list<T: CollectionElement>(_ property: Property<E>, of type: T.Type) throws -> [T]? {
        guard property.pathNumber == 0 else { throw throughEmbedded(property) }
        try checkCollection(property, .list, T.self)
        return try record.list(T.self, slot: property.slot)
    }

    /// A set property's elements; nil when absent.
    public func set<T: CollectionElement>(_ property: Property<E>, of type: T.Type) throws -> Set<T>? {
        guard property.pathNumber == 0 else { throw throughEmbedded(property) }
        try checkCollection(property, .set, T.self)
        return try record.set(T.self, slot: property.slot)
    }

    /// A map property's entries; nil when absent.
    public func map<T: CollectionElement>(_ property: Property<E>, of type: T.Type) throws -> [String: T]? {
        guard property.pathNumber == 0 else { throw throughEmbedded(property) }
        try checkCollection(property, .map, T.self)
        return try record.map(T.self, slot: property.slot)
    }

    /// A Flex property's value; nil when absent.
    public func flex(_ property: Property<E>) throws -> FlexValue? {
        guard property.pathNumber == 0 else { throw throughEmbedded(property) }
        try check(property, .flex)
        return try record.flex(slot: property.slot)
    }

    /// Checks that `property` is a `kind` of elements stored as `T` is (same width, Bools as Bools;
    /// strings and `Data` read each other's bytes).
    func checkCollection<T: CollectionElement>(_ property: Property<E>, _ kind: CollectionShape.Kind, _ type: T.Type) throws {
        guard let shape = property.type.collection, shape.kind == kind, shape.elementWidth == T.elementWidth,
              (shape.element == .bool) == (T.self == Bool.self) else {
            throw mismatch(property, "a \(kind) of \(T.self)")
        }
    }

    /// Throws unless `property` is of type `type` or `other` (no array made: this runs per object).
    @inlinable
    func check(_ property: Property<E>, _ type: PropertyType, or other: PropertyType? = nil) throws {
        guard property.type == type || property.type == other else {
            throw mismatch(property, other.map { "\(type) or \($0)" } ?? "\(type)")
        }
    }

    @usableFromInline
    func mismatch(_ property: Property<E>, _ wanted: String) -> CellarError {
        .illegalArgument("\(property) is a \(property.type), not \(wanted)")
    }
}
