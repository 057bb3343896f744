import CellarStorage
import Foundation

/// Code that runs once, when a store whose stored schema version (``StoreOptions/schemaVersion``)
/// is older than the app's is opened: a ``StoreOptions/migration`` closure is handed one.
///
/// The migration sees the objects as the old model stored them and writes them as the new model
/// stores them, by entity and property name (the generated classes know only the new model):
///
/// ```swift
/// options.schemaVersion = 2
/// options.migration = { migration in
///     try migration.enumerateObjects(ofType: "Person") { old, new in
///         // v1 had `name`; v2 has `firstName` and `lastName` (new UIDs).
///         let parts = try old["name"].stringValue?.split(separator: " ") ?? []
///         try new?.set("firstName", to: .string(parts.first.map(String.init) ?? ""))
///         try new?.set("lastName", to: .string(parts.dropFirst().joined(separator: " ")))
///     }
/// }
/// ```
///
/// It runs inside the open's one write transaction, before the new model's indexes are built and
/// checked: everything it does, the model change and the new version commit together or not at
/// all (a throw, or a crash, leaves the store at the old version, as it was). See
/// `docs/migrations.md`.
public final class Migration {
    /// The schema version the store had (0 for a store that never had one).
    public let oldVersion: UInt64
    /// The version the store has once the migration commits.
    public let newVersion: UInt64
    /// The model the store was written with.
    public let oldModel: Model
    /// The model the store is opened with (with the stored one's history).
    public let newModel: Model

    let context: TransactionContext
    /// Per entity ID: what the pass over its objects does besides the closure's body.
    private var plans: [UInt32: EntityRewrite] = [:]
    /// Entities whose objects were passed over (once each).
    private(set) var rewritten: Set<UInt32> = []
    /// The object being visited, for `delete`.
    private var visiting: MigrationObject?

    init(oldVersion: UInt64, newVersion: UInt64, oldModel: Model, newModel: Model, context: TransactionContext) {
        self.oldVersion = oldVersion
        self.newVersion = newVersion
        self.oldModel = oldModel
        self.newModel = newModel
        self.context = context
    }

    /// Calls `body` with each stored object of entity `name` (its name in the new model, or in
    /// the old one for an entity the new model no longer has), in id order: `old` reads the
    /// object as the old model stored it, `new` (nil for an entity gone from the new model) is
    /// the object the new model stores, starting with every value whose property kept its type;
    /// set values on it, or ``delete(_:)`` it.
    ///
    /// Once per entity in a migration: `old` is always the object as it was before the migration.
    /// Memory stays bounded: each object is written back before the next is read.
    public func enumerateObjects(ofType name: String, _ body: (_ old: MigrationObject, _ new: MigrationObject?) throws -> Void) throws {
        let plan = try rewrite(of: name)
        guard rewritten.insert(plan.entityId).inserted else {
            throw CellarError.illegalArgument("enumerateObjects(ofType: \"\(name)\") ran once already in this migration: do all of \(name)'s changes in one pass, where `old` is still the object as it was stored")
        }
        try plan.run(in: context) { old, new in
            visiting = new
            defer { visiting = nil }
            try body(old, new)
        }
    }

    /// Removes `object` (the `new` object being visited by ``enumerateObjects(ofType:_:)``) with
    /// its relation links; its id is never handed out again.
    public func delete(_ object: MigrationObject) throws {
        guard let visiting, visiting === object else {
            throw CellarError.illegalArgument("delete(_:) takes the `new` object enumerateObjects is visiting")
        }
        object.isDeleted = true
    }

    /// Gives property `newName` of entity `type` the values of the old model's property
    /// `oldName` (for a rename made without keeping the property's UID, or a move between
    /// properties): converted when their types differ and `FlexValue` says how (see
    /// ``MigrationObject/set(_:to:)``). Called before the entity's ``enumerateObjects(ofType:_:)``,
    /// or alone: then its objects are passed over when the closure returns.
    public func renameProperty(onType type: String, from oldName: String, to newName: String) throws {
        let plan = try rewrite(of: type)
        guard !rewritten.contains(plan.entityId) else {
            throw CellarError.illegalArgument("renameProperty(onType: \"\(type)\", …) must come before enumerateObjects(ofType: \"\(type)\")")
        }
        guard let old = plan.old.properties.first(where: { $0.name == oldName && !$0.flags.contains(.id) }) else {
            throw CellarError.illegalArgument("the old model's \(plan.old.name) has no property \(oldName)")
        }
        guard let newEntity = plan.new, let new = newEntity.properties.first(where: { $0.name == newName && !$0.flags.contains(.id) }) else {
            throw CellarError.illegalArgument("the new model's \(type) has no property \(newName)")
        }
        plan.renames.append((old, new))
    }

    /// The rewrite of entity `name`'s objects, made on first use.
    private func rewrite(of name: String) throws -> EntityRewrite {
        let new = newModel.entity(named: name)
        guard let old = new.flatMap({ entity in oldModel.entities.first { $0.id.uid == entity.id.uid } })
                ?? (new == nil ? oldModel.entity(named: name) : nil) else {
            throw CellarError.illegalArgument(new == nil
                ? "neither model has an entity \(name)"
                : "entity \(name) is new in this model: it has no stored objects to migrate")
        }
        guard !old.isEmbedded else {
            throw CellarError.illegalArgument("\(name) is an embedded type: migrate it through the objects of the entities that hold it")
        }
        if let plan = plans[old.id.id] { return plan }
        let plan = EntityRewrite(old: old, new: new, oldModel: oldModel, newModel: newModel,
                                 schema: new.flatMap { context.store.schemas[$0.id.uid] })
        plans[old.id.id] = plan
        return plan
    }

    /// After the closure: passes over the objects of each entity that has renames not yet
    /// applied or properties whose type changed (their old bytes cannot stay), without a body.
    /// Throws for a type change the closure did not look at.
    func finish() throws {
        for entity in newModel.entities where !entity.isEmbedded {
            guard let old = oldModel.entities.first(where: { $0.id.uid == entity.id.uid }),
                  !rewritten.contains(old.id.id) else { continue }
            let changed = EntityRewrite.typeChanges(old: old, new: entity)
            if let property = changed.first, plans[old.id.id]?.renames.isEmpty ?? true {
                let before = old.properties.first { $0.id.uid == property.id.uid }!
                throw CellarError.schema("property \(entity.name).\(property.name) changed its type from \(before.type) to \(property.type), and the migration to schema version \(newVersion) did not visit \(entity.name)'s objects: convert the values in `migration.enumerateObjects(ofType: \"\(entity.name)\")` (read the old value with `old[\"\(before.name)\"]`), or keep the old type")
            }
            if !changed.isEmpty || !(plans[old.id.id]?.renames.isEmpty ?? true) {
                try enumerateObjects(ofType: entity.name) { _, _ in }
            }
        }
    }
}

/// One object in a migration: the old model's view of it (read-only) or the new model's (read
/// and write), by property name. Values are `FlexValue`s; `docs/migrations.md` lists the case
/// each property type reads as and takes.
public final class MigrationObject {
    /// The object's id (the same in the old model and the new).
    public let id: Id
    /// The entity's name in the model this object is seen through.
    public let entityName: String

    private let entity: ModelEntity
    private let model: Model
    private let properties: [String: ModelProperty]
    /// The record read; for a `new` object, the old record (fields of properties whose type
    /// changed are not read from it).
    private let reader: RecordReader
    /// For a `new` object: the values set, by property ID.
    private(set) var assigned: [UInt32: FlexValue] = [:]
    /// Slots of a `new` object that hold nothing from the old record (their type changed).
    private let cleared: Set<UInt32>
    let isWritable: Bool
    var isDeleted = false

    init(id: Id, entity: ModelEntity, properties: [String: ModelProperty], model: Model, reader: RecordReader,
         writable: Bool, cleared: Set<UInt32> = []) {
        self.id = id
        self.entityName = entity.name
        self.entity = entity
        self.properties = properties
        self.model = model
        self.reader = reader
        self.isWritable = writable
        self.cleared = cleared
    }

    /// The properties of `entity` by name, for its objects.
    static func byName(_ entity: ModelEntity) -> [String: ModelProperty] {
        Dictionary(entity.properties.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The value of property `name`: `.null` when absent. The id property reads as the id.
    /// Throws `illegalArgument` for a name the model's entity does not have.
    public subscript(name: String) -> FlexValue {
        get throws {
            let property = try property(named: name)
            if property.flags.contains(.id) { return .integer(Int64(bitPattern: id)) }
            if let value = assigned[property.id.id] { return value }
            if cleared.contains(property.id.id) { return .null }
            return try MigrationValues.read(property, in: reader, model: model)
        }
    }

    /// Sets property `name` of this `new` object to `value` (`.null`: absent). Throws
    /// `illegalArgument` for the `old` object, an unknown name or the id property; a value the
    /// property's type does not take fails the migration with `illegalArgument` naming the
    /// property and the object once the closure returns for this object (before the commit).
    public func set(_ name: String, to value: FlexValue) throws {
        guard isWritable else {
            throw CellarError.illegalArgument("the old \(entityName) object is read-only: set \(name) on the new one")
        }
        let property = try property(named: name)
        guard !property.flags.contains(.id) else {
            throw CellarError.illegalArgument("\(entityName).\(name) is the object id; a migration keeps ids")
        }
        // Converted when the new record is built (`build(into:)`), where a bad value names its
        // property and object.
        assigned[property.id.id] = value
    }

    private func property(named name: String) throws -> ModelProperty {
        guard let property = properties[name] else {
            throw CellarError.illegalArgument("the \(isWritable ? "new" : "old") model's \(entityName) has no property \(name)")
        }
        return property
    }

    /// Builds the new record into `builder`: the old record's fields of the new model's
    /// properties that kept their type, then the values set.
    func build(into builder: RecordBuilder) throws {
        builder.start(slotCount: Int(entity.lastPropertyId.id))
        for property in entity.properties where !property.flags.contains(.id) {
            if let value = assigned[property.id.id] {
                do {
                    try MigrationValues.write(value, of: property, model: model, into: builder)
                } catch let error as CellarError where error.code == .illegalArgument {
                    throw CellarError.illegalArgument("\(entityName).\(property.name) of object \(id): \(error.message)")
                }
            } else if !cleared.contains(property.id.id), Int(property.id.id) <= reader.slots {
                try builder.copyField(Int(property.id.id) - 1, of: property.type, from: reader)
            }
        }
    }
}

/// The pass over one entity's objects: reads each old record, hands it to the body, writes the
/// new record (or removes the object).
final class EntityRewrite {
    let old: ModelEntity
    let new: ModelEntity?
    let oldModel: Model
    let newModel: Model
    /// The new model's schema of the entity (nil when the new model does not have it).
    let schema: EntitySchema?
    var renames: [(from: ModelProperty, to: ModelProperty)] = []
    /// The new model's properties whose type differs from the old model's (same UID).
    let changedTypes: Set<UInt32>

    var entityId: UInt32 { old.id.id }

    init(old: ModelEntity, new: ModelEntity?, oldModel: Model, newModel: Model, schema: EntitySchema?) {
        self.old = old
        self.new = new
        self.oldModel = oldModel
        self.newModel = newModel
        self.schema = schema
        changedTypes = Set(new.map { EntityRewrite.typeChanges(old: old, new: $0).map(\.id.id) } ?? [])
    }

    /// The properties of `new` whose type differs from `old`'s property of the same UID.
    static func typeChanges(old: ModelEntity, new: ModelEntity) -> [ModelProperty] {
        let before = Dictionary(old.properties.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
        return new.properties.filter { property in
            guard let was = before[property.id.uid] else { return false }
            return property.changesType(from: was)
        }
    }

    func run(in context: TransactionContext, _ body: (MigrationObject, MigrationObject?) throws -> Void) throws {
        let write = context.write!
        guard let tree = try write.tree(StorageLayout.entityTree(old.id.id), create: false) else { return }
        let cursor = try write.cursor(tree)
        let builder = RecordBuilder()
        let oldProperties = MigrationObject.byName(old)
        let newProperties = new.map(MigrationObject.byName) ?? [:]
        var found = try cursor.first()
        while found {
            let id = try StorageLayout.objectId(cursor.key)
            // A copy: the record is read while the tree changes under it.
            let bytes = Array(try cursor.value())
            try bytes.withUnsafeBytes { raw in
                let reader = try RecordReader(raw)
                let oldObject = MigrationObject(id: id, entity: old, properties: oldProperties, model: oldModel, reader: reader,
                                                writable: false)
                let newObject = new.map {
                    MigrationObject(id: id, entity: $0, properties: newProperties, model: newModel, reader: reader,
                                    writable: true, cleared: changedTypes)
                }
                if let newObject {
                    for (from, to) in renames { try newObject.set(to.name, to: try oldObject[from.name]) }
                }
                try body(oldObject, newObject)
                guard let newObject, let schema else { return }
                if newObject.isDeleted {
                    try StorageLayout.withObjectKey(id) { _ = try write.delete(tree, key: $0) }
                    if schema.hasRelations { try context.removeRelations(of: schema, id: id) }
                    try context.withSequence(schema) { $0.noteRemoved(id) }
                } else {
                    try newObject.build(into: builder)
                    try StorageLayout.withObjectKey(id) { try write.put(tree, key: $0, value: builder.bytes) }
                }
            }
            found = try withUnsafeBytes(of: (id &+ 1).bigEndian) { key in id == .max ? false : try cursor.seek(key) }
        }
    }
}
