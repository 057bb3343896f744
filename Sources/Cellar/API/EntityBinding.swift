/// Marks a type as an entity: a class (with `init()`) or struct whose objects the generator makes
/// storable. The generator writes its `EntityInspectable` conformance and its binding.
public protocol Entity {}

/// What generated code adds to an entity type: the binding that stores and reads its objects.
public protocol EntityInspectable {
    /// The type of the generated binding.
    associatedtype EntityBindingType: EntityBinding where EntityBindingType.EntityType == Self
    /// The binding (generated; stateless).
    static var entityBinding: EntityBindingType { get }
}

/// Converts between objects of one entity type and records. Written by the generator (or by hand,
/// following the same rules): each stored property goes to the record slot property ID − 1.
/// The file of a binding imports `@_spi(CellarGenerated) import Cellar`: the record accessors,
/// converters, relation hooks and model constructors it calls are SPI, kept out of app code.
public protocol EntityBinding: Sendable {
    /// The entity type the binding reads and writes.
    associatedtype EntityType
    /// The entity's name in the model (the type's name unless `// cellar: name` renames it).
    var entityName: String { get }
    /// The entity's ID and UID in the model the binding was generated from.
    var entityId: IdUid { get }
    /// The record slots to write: the entity's last property ID.
    var slotCount: Int { get }
    /// The object's id (0: never stored).
    func id(of entity: EntityType) -> Id
    /// Sets the object's id after a put. For a struct this changes the caller's copy only when it
    /// was passed `inout`.
    func setId(_ id: Id, of entity: inout EntityType)
    /// Writes every stored property but the id into `record` (already begun with `slotCount`).
    func write(_ entity: EntityType, to record: RecordBuilder) throws
    /// Builds an object from `record`, stored under `id`. Absent slots read as the property's
    /// default (or nil for an optional): that is how records written before a property was added read.
    func read(id: Id, from record: RecordReader) throws -> EntityType
    /// Lets the object's relations (`ToOne`, `ToMany`) read from `store`, after a get or a put.
    /// Generated for entities with relations; the default does nothing.
    func attach(_ entity: EntityType, id: Id, store: Store)
    /// Writes the changes of the object's `ToMany` relations, after its record was written under
    /// `id`, in the same transaction. Generated for entities with `ToMany`s; the default does nothing.
    func writeRelations(of entity: EntityType, id: Id, in writer: RelationWriter) throws
    /// Whether `attach` and `writeRelations` do anything (skips them on the hot paths).
    var hasRelations: Bool { get }
}

extension EntityBinding {
    /// Does nothing: the default for entities without relations.
    public func attach(_ entity: EntityType, id: Id, store: Store) {}
    /// Does nothing: the default for entities without `ToMany` relations.
    public func writeRelations(of entity: EntityType, id: Id, in writer: RelationWriter) throws {}
    /// False: the default for entities without relations.
    public var hasRelations: Bool { false }
}
