/// The meta model: every entity, property, index and relation with its ID and UID, the last IDs
/// handed out and the UIDs retired, as in ObjectBox's `model-<Target>.json`.
///
/// The generator keeps it in the model JSON file (see `ModelJSON`); generated code passes it to
/// `Store`, which syncs it with the copy stored in the database (see `ModelSync`).
public struct Model: Hashable, Sendable {
    /// The entities and embedded types, in the order of the model file.
    public var entities: [ModelEntity]
    /// The last entity ID handed out, with its UID; new entities get the IDs after it.
    public var lastEntityId: IdUid
    /// The last index ID handed out, with its UID.
    public var lastIndexId: IdUid
    /// The last standalone relation ID handed out, with its UID.
    public var lastRelationId: IdUid
    /// The last sequence ID, with its UID: a member of ObjectBox's model file that Cellar keeps (it
    /// uses no sequences); a sync never lowers it.
    public var lastSequenceId: IdUid
    /// The UIDs of entities removed from the code; never used again.
    public var retiredEntityUids: [UInt64]
    /// The UIDs of indexes removed from the code; never used again.
    public var retiredIndexUids: [UInt64]
    /// The UIDs of properties removed from the code; never used again.
    public var retiredPropertyUids: [UInt64]
    /// The UIDs of relations removed from the code; never used again.
    public var retiredRelationUids: [UInt64]
    /// The format version of the model file (ObjectBox writes 5).
    public var modelVersion: Int
    /// The oldest parser that can read this file (ObjectBox writes 4).
    public var modelVersionParserMinimum: Int
    /// The model file's `version` member (1 in the files Cellar writes).
    public var version: Int
    /// Top-level members Cellar does not interpret (the `_note1`… notes, future fields), kept and
    /// written back as they were.
    public var extra: [JSONMember]

    /// A model; generated code builds the code's model with it.
    @_spi(CellarGenerated) public init(entities: [ModelEntity] = [], lastEntityId: IdUid = .zero, lastIndexId: IdUid = .zero,
                lastRelationId: IdUid = .zero, lastSequenceId: IdUid = .zero,
                retiredEntityUids: [UInt64] = [], retiredIndexUids: [UInt64] = [],
                retiredPropertyUids: [UInt64] = [], retiredRelationUids: [UInt64] = [],
                modelVersion: Int = 5, modelVersionParserMinimum: Int = 4, version: Int = 1,
                extra: [JSONMember] = Model.standardNotes) {
        self.entities = entities
        self.lastEntityId = lastEntityId
        self.lastIndexId = lastIndexId
        self.lastRelationId = lastRelationId
        self.lastSequenceId = lastSequenceId
        self.retiredEntityUids = retiredEntityUids
        self.retiredIndexUids = retiredIndexUids
        self.retiredPropertyUids = retiredPropertyUids
        self.retiredRelationUids = retiredRelationUids
        self.modelVersion = modelVersion
        self.modelVersionParserMinimum = modelVersionParserMinimum
        self.version = version
        self.extra = extra
    }

    /// The notes at the top of a new model file.
    public static let standardNotes: [JSONMember] = [
        JSONMember("_note1", .string("KEEP THIS FILE! Check it into a version control system (VCS) like git.")),
        JSONMember("_note2", .string("Cellar manages crucial IDs for your object model. See docs for details.")),
        JSONMember("_note3", .string("If you have VCS merge conflicts, you must resolve them according to the docs (docs/model.md).")),
    ]

    /// The entity with this name, if any.
    public func entity(named name: String) -> ModelEntity? { entities.first { $0.name == name } }

    /// The entity with this UID, if any.
    public func entity(uid: UInt64) -> ModelEntity? { entities.first { $0.id.uid == uid } }
}

/// An entity (a stored type) of the meta model.
public struct ModelEntity: Hashable, Sendable {
    /// The entity's name: its type's name, unless an annotation renames it.
    public var name: String
    /// The entity's ID and UID.
    public var id: IdUid
    /// The last property ID handed out in this entity, with its UID.
    public var lastPropertyId: IdUid
    /// The stored properties, in the order of the model file.
    public var properties: [ModelProperty]
    /// Standalone to-many relations (`ToMany` without a backlink).
    public var relations: [ModelRelation]
    /// Indexes over several properties (`// cellar: index = ["a", "b"]` or `unique = […]` on the
    /// type). Model member `indexes`, a Cellar extension.
    public var indexes: [ModelIndex]
    /// Entity flags, when the file has them.
    public var flags: UInt32?
    /// Members Cellar does not interpret, kept as read.
    public var extra: [JSONMember]

    /// An entity of a model; generated code builds the code's model with it.
    @_spi(CellarGenerated) public init(name: String, id: IdUid, lastPropertyId: IdUid, properties: [ModelProperty],
                relations: [ModelRelation] = [], indexes: [ModelIndex] = [], flags: UInt32? = nil, extra: [JSONMember] = []) {
        self.name = name
        self.indexes = indexes
        self.id = id
        self.lastPropertyId = lastPropertyId
        self.properties = properties
        self.relations = relations
        self.flags = flags
        self.extra = extra
    }

    /// The property with this name, if any.
    public func property(named name: String) -> ModelProperty? { properties.first { $0.name == name } }

    /// The entity flag of an embedded type (`// cellar: embedded`): a type without an id or a box
    /// whose objects live inside their owners' records. A Cellar extension: the bit is far above
    /// ObjectBox's entity flags (see `docs/embedded.md`).
    public static let embeddedFlag: UInt32 = 1 << 28

    /// Whether this is an embedded type, not an entity.
    public var isEmbedded: Bool { (flags ?? 0) & Self.embeddedFlag != 0 }

    /// The entity flag of an asymmetric entity (`// cellar: asymmetric`): insert-only objects
    /// that sync pushes to its server and then removes from the store (telemetry, logs); the
    /// store itself treats them as any other. A Cellar extension, beside ``embeddedFlag``.
    public static let asymmetricFlag: UInt32 = 1 << 29

    /// Whether this is an asymmetric (insert-only, push-only) entity.
    public var isAsymmetric: Bool { (flags ?? 0) & Self.asymmetricFlag != 0 }

    /// The id property (flag `id`), if any.
    public var idProperty: ModelProperty? { properties.first { $0.flags.contains(.id) } }
}

/// An index over several properties of one entity, in the order their values make its keys
/// (SwiftData's `#Index` and `#Unique`): it serves equality on all of them and on a prefix of them.
public struct ModelIndex: Hashable, Sendable {
    /// The index's ID and UID, handed out from the model's ``Model/lastIndexId`` as a property
    /// index's are.
    public var id: IdUid
    /// The indexed properties' IDs and UIDs, in key order (at least two, none twice).
    public var properties: [IdUid]
    /// No two objects may hold the same values in all of the properties (an object with an
    /// absent value in one of them is not checked, as SQL's `UNIQUE` does with `NULL`).
    public var unique: Bool
    /// Members Cellar does not interpret, kept as read.
    public var extra: [JSONMember]

    /// An index of a model; generated code builds the code's model with it.
    @_spi(CellarGenerated) public init(id: IdUid, properties: [IdUid], unique: Bool = false, extra: [JSONMember] = []) {
        self.id = id
        self.properties = properties
        self.unique = unique
        self.extra = extra
    }
}

extension ModelEntity {
    /// How `index` reads in messages: `Person(lastName, firstName)`.
    func describe(_ index: ModelIndex) -> String {
        "\(name)(\(propertyNames(of: index).joined(separator: ", ")))"
    }

    /// The names of the properties `index` holds, in key order (`#ID` for one this entity lacks).
    func propertyNames(of index: ModelIndex) -> [String] {
        index.properties.map { id in properties.first { $0.id.uid == id.uid }?.name ?? "#\(id.id)" }
    }
}

/// A property of an entity.
public struct ModelProperty: Hashable, Sendable {
    /// The property's name.
    public var name: String
    /// The ID (unique within its entity; the record slot is ID − 1) and UID.
    public var id: IdUid
    /// How the value is stored (ObjectBox's type codes and Cellar's extensions).
    public var type: PropertyType
    /// The property's flags: id, index kinds, unique, unsigned and others.
    public var flags: PropertyFlags
    /// The property's index, when it has one.
    public var indexId: IdUid?
    /// The target entity's name, for a to-one relation (`type` `.relation`).
    public var relationTarget: String?
    /// The embedded type's name, for a property holding embedded objects (`type` `.embedded` or
    /// `.embeddedList`).
    public var embeddedType: String?
    /// The parameters of an HNSW vector index on a `[Float]` property (`// cellar: hnsw = {…}`),
    /// as the model file writes them (ObjectBox's member `hnswParams`); nil without one.
    public var hnswParams: JSONValue?
    /// For a to-one relation: what removing this object does to its target (nil: nothing, as
    /// ``DeleteRule/nullify``). Model member `deleteRule`, a Cellar extension.
    public var deleteRule: DeleteRule?
    /// For a to-one relation: what removing its target does to this object, the rule of the
    /// backlink declared on the target (nil: the link dangles and reads as no target). Model
    /// member `backlinkDeleteRule`, a Cellar extension.
    public var backlinkDeleteRule: DeleteRule?
    /// Members Cellar does not interpret, kept as read.
    public var extra: [JSONMember]
    /// What queries read for this property in a record written before it was added (one without
    /// its field), as the binding's `read` does; nil: an absent field is nil to queries. Set by
    /// the generated `cellarModel()` from the property's initial value. It belongs to the code's
    /// model only: it is not written to the model JSON file or the database, and models equal
    /// but for their defaults are equal (`==`).
    public var defaultValue: PropertyDefault?

    /// A property of a model; generated code builds the code's model with it.
    @_spi(CellarGenerated) public init(name: String, id: IdUid, type: PropertyType, flags: PropertyFlags = [],
                indexId: IdUid? = nil, relationTarget: String? = nil, embeddedType: String? = nil,
                hnswParams: JSONValue? = nil, deleteRule: DeleteRule? = nil, backlinkDeleteRule: DeleteRule? = nil,
                extra: [JSONMember] = [], defaultValue: PropertyDefault? = nil) {
        self.name = name
        self.deleteRule = deleteRule
        self.backlinkDeleteRule = backlinkDeleteRule
        self.id = id
        self.type = type
        self.flags = flags
        self.indexId = indexId
        self.relationTarget = relationTarget
        self.embeddedType = embeddedType
        self.hnswParams = hnswParams
        self.extra = extra
        self.defaultValue = defaultValue
    }

    /// Whether stored values of `before` (the same property, by UID) cannot be read as this
    /// property's: another type, or another signedness. Such a change needs a migration.
    func changesType(from before: ModelProperty) -> Bool {
        before.type != type || before.flags.contains(.unsigned) != flags.contains(.unsigned)
    }

    /// Compares everything the model file holds: not `defaultValue`.
    public static func == (a: ModelProperty, b: ModelProperty) -> Bool {
        a.name == b.name && a.id == b.id && a.type == b.type && a.flags == b.flags && a.indexId == b.indexId
            && a.relationTarget == b.relationTarget && a.embeddedType == b.embeddedType && a.hnswParams == b.hnswParams
            && a.deleteRule == b.deleteRule && a.backlinkDeleteRule == b.backlinkDeleteRule && a.extra == b.extra
    }

    /// Hashes what ``==(_:_:)`` compares: everything but ``defaultValue``.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(id)
        hasher.combine(type)
        hasher.combine(flags)
        hasher.combine(indexId)
        hasher.combine(relationTarget)
        hasher.combine(embeddedType)
        hasher.combine(hnswParams)
        hasher.combine(deleteRule)
        hasher.combine(backlinkDeleteRule)
        hasher.combine(extra)
    }
}

/// A standalone to-many relation of an entity.
public struct ModelRelation: Hashable, Sendable {
    /// The relation's name: its ``ToMany`` property's name, unless an annotation renames it.
    public var name: String
    /// The relation's ID and UID.
    public var id: IdUid
    /// The target entity's ID and UID.
    public var targetId: IdUid
    /// What removing an object does to the objects it links to (nil: unlinks them, as
    /// ``DeleteRule/nullify``). Model member `deleteRule`, a Cellar extension.
    public var deleteRule: DeleteRule?
    /// What removing a target does to the objects linking to it, the rule of the backlink declared
    /// on the target (nil: unlinks them). Model member `backlinkDeleteRule`, a Cellar extension.
    public var backlinkDeleteRule: DeleteRule?
    /// Members Cellar does not interpret, kept as read.
    public var extra: [JSONMember]

    /// A relation of a model; generated code builds the code's model with it.
    @_spi(CellarGenerated) public init(name: String, id: IdUid, targetId: IdUid, deleteRule: DeleteRule? = nil,
                                       backlinkDeleteRule: DeleteRule? = nil, extra: [JSONMember] = []) {
        self.name = name
        self.deleteRule = deleteRule
        self.backlinkDeleteRule = backlinkDeleteRule
        self.id = id
        self.targetId = targetId
        self.extra = extra
    }
}

/// What removing an object does to the objects a relation reaches from it (`docs/queries.md`,
/// "Delete rules"); applied in the remove's own transaction.
public enum DeleteRule: String, Hashable, Sendable, CaseIterable {
    /// Removes them too (and what their own rules reach: chains and cycles end when every object
    /// reached is removed).
    case cascade
    /// Leaves them, unlinked: a standalone relation's links go; a to-one relation pointing at the
    /// removed object is set to no target.
    case nullify
    /// Refuses the remove while any are linked: `CellarError.Code.deleteDenied`, and the
    /// transaction removes nothing.
    case deny
}
