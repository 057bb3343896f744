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
        record = try RecordReader(bytes)
    }

    /// The record holding `property`'s field: the object's own, or for a property of an embedded
    /// object (`Contact.home.city`) the nested record (an empty one when the object is absent,
    /// so that every property of it reads as nil).
    @inlinable @inline(__always)
    func fields(_ property: Property<E>) throws -> RecordReader {
        if _fastPath(property.pathNumber == 0) { return record }
        return try nestedFields(property)
    }

    @usableFromInline
    func nestedFields(_ property: Property<E>) throws -> RecordReader {
        var reader = record
        for step in property.via {
            guard !step.isList else {
                throw CellarError.illegalArgument("\(property) goes through \(step.name), a list of embedded objects, which has one value per element; read the object instead")
            }
            guard let nested = try reader.nested(slot: Int(step.id) - 1) else { return RecordReader(empty: ()) }
            reader = nested
        }
        return reader
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
        try check(property, .string)
        return try fields(property).string(slot: property.slot)
    }

    /// The number of UTF-8 bytes of a string property (or of a byte vector); nil when absent.
    @inlinable
    public func utf8Count(_ property: Property<E>) throws -> Int? {
        try check(property, .string, or: .byteVector)
        return try fields(property).bytes(slot: property.slot)?.count
    }

    /// A string or byte vector property's bytes, in place: valid only inside the `visit` closure.
    @inlinable
    public func bytes(_ property: Property<E>) throws -> UnsafeRawBufferPointer? {
        try check(property, .string, or: .byteVector)
        return try fields(property).bytes(slot: property.slot)
    }

    /// An integer property's value (also Bool as 0/1, dates in their stored unit, relation ids);
    /// nil when absent. Unsigned values above `Int64.max` come as their bit pattern.
    /// Always inlined: with a generated property the type is a constant and the switch folds away.
    @inlinable @inline(__always)
    public func integer(_ property: Property<E>) throws -> Int64? {
        switch property.type {
        case .long, .date, .dateNano, .relation: return try fields(property).read(Int64.self, slot: property.slot)
        case .int: return try fields(property).read(Int32.self, slot: property.slot).map(Int64.init)
        case .bool, .byte: return try fields(property).read(Int8.self, slot: property.slot).map(Int64.init)
        case .short, .char: return try fields(property).read(Int16.self, slot: property.slot).map(Int64.init)
        default: throw mismatch(property, "an integer")
        }
    }

    /// A Float or Double property's value; nil when absent.
    public func double(_ property: Property<E>) throws -> Double? {
        switch property.type {
        case .float: return try fields(property).float(slot: property.slot).map(Double.init)
        case .double: return try fields(property).double(slot: property.slot)
        default: throw mismatch(property, "a Float or Double")
        }
    }

    /// A UUID property's value; nil when absent.
    public func uuid(_ property: Property<E>) throws -> UUID? {
        try check(property, .uuid)
        return try fields(property).uuid(slot: property.slot)
    }

    /// A Date property's value; nil when absent.
    public func date(_ property: Property<E>) throws -> Date? {
        switch property.type {
        case .date: return try fields(property).date(slot: property.slot)
        case .dateNano: return try fields(property).dateNanoseconds(slot: property.slot)
        default: throw mismatch(property, "a Date")
        }
    }

    /// A list property's elements (e.g. `view.list(Note.tags, of: String.self)`); nil when absent.
    public func list<T: CollectionElement>(_ property: Property<E>, of type: T.Type) throws -> [T]? {
        try checkCollection(property, .list, T.self)
        return try fields(property).list(T.self, slot: property.slot)
    }

    /// A set property's elements; nil when absent.
    public func set<T: CollectionElement>(_ property: Property<E>, of type: T.Type) throws -> Set<T>? {
        try checkCollection(property, .set, T.self)
        return try fields(property).set(T.self, slot: property.slot)
    }

    /// A map property's entries; nil when absent.
    public func map<T: CollectionElement>(_ property: Property<E>, of type: T.Type) throws -> [String: T]? {
        try checkCollection(property, .map, T.self)
        return try fields(property).map(T.self, slot: property.slot)
    }

    /// A Flex property's value; nil when absent.
    public func flex(_ property: Property<E>) throws -> FlexValue? {
        try check(property, .flex)
        return try fields(property).flex(slot: property.slot)
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
