/// What generated code adds to an embedded type (a struct or class marked `// cellar: embedded`):
/// the binding that writes its objects into, and reads them from, their owners' records.
///
/// An embedded object has no id and no box. It belongs to exactly one owner (an entity's object,
/// or another embedded object), is written and read with it as a nested record, and is gone when
/// the owner is removed. See `docs/embedded.md`.
public protocol EmbeddedInspectable {
    /// The type of the generated binding.
    associatedtype EmbeddedBindingType: EmbeddedBinding where EmbeddedBindingType.EmbeddedType == Self
    /// The binding (generated; stateless).
    static var embeddedBinding: EmbeddedBindingType { get }
}

/// Converts between objects of one embedded type and nested records, following the rules of
/// ``EntityBinding``: each stored property goes to the record slot property ID − 1.
public protocol EmbeddedBinding: Sendable {
    /// The embedded type the binding reads and writes.
    associatedtype EmbeddedType
    /// The embedded type's name in the model.
    var typeName: String { get }
    /// The embedded type's ID and UID in the model the binding was generated from.
    var typeId: IdUid { get }
    /// The record slots to write: the type's last property ID.
    var slotCount: Int { get }
    /// Writes every stored property into `record` (already begun with `slotCount`).
    func write(_ value: EmbeddedType, to record: RecordBuilder) throws
    /// Builds an object from `record`. Absent slots read as the property's default (or nil for
    /// an optional), as for entities.
    func read(from record: RecordReader) throws -> EmbeddedType
}
