@_spi(CellarGenerated) import Cellar

/// Where something is in the sources: `file:line:column` in messages, as compilers print them.
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String { "\(file):\(line):\(column)" }
}

/// Everything the generator refuses: a message that says what is wrong and what to do, with the
/// place in the sources (or in the model file) when there is one.
public struct GeneratorError: Error, Hashable, Sendable, CustomStringConvertible {
    public var location: SourceLocation?
    public var message: String

    public init(_ message: String, at location: SourceLocation? = nil) {
        self.location = location
        self.message = message
    }

    /// `file:line:column: error: message`, which Xcode and editors link to the place.
    public var description: String {
        if let location { return "\(location): error: \(message)" }
        return "error: \(message)"
    }
}

/// An entity as the sources declare it, after annotations and types were understood.
public struct EntityDescription: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        case `class`
        case `struct`
    }

    /// The Swift type's name.
    public var typeName: String
    /// The name in the model (`// cellar: name = "…"` on the type, else `typeName`).
    public var modelName: String
    public var kind: Kind
    /// `// cellar: uid` (nil: no annotation; `.some(nil)`: the annotation without a value).
    public var uid: UInt64??
    public var properties: [PropertyDescription]
    /// The `ToMany` properties, standalone relations and backlinks, in declaration order. They
    /// are not stored in the object's record: `attach` and `writeRelations` handle them.
    public var relations: [RelationDescription]
    /// Whether the type is declared `public` (or `open`).
    public var isPublic: Bool
    /// An embedded type (`// cellar: embedded`): no id, no box; its objects are stored inside
    /// their owners' records. In the model it is an entity with `ModelEntity.embeddedFlag`.
    public var isEmbedded: Bool
    /// An asymmetric entity (`// cellar: asymmetric`): insert-only objects that sync pushes to
    /// its server and then removes locally. In the model: `ModelEntity.asymmetricFlag`.
    public var isAsymmetric: Bool
    /// Indexes over several properties (`// cellar: index = ["a", "b"]` or `unique = […]` on
    /// the type).
    public var indexes: [IndexDescription] = []
    public var location: SourceLocation

    public init(typeName: String, modelName: String, kind: Kind, uid: UInt64??, properties: [PropertyDescription],
                relations: [RelationDescription] = [], isPublic: Bool, isEmbedded: Bool = false, isAsymmetric: Bool = false,
                location: SourceLocation) {
        self.typeName = typeName
        self.modelName = modelName
        self.kind = kind
        self.uid = uid
        self.properties = properties
        self.relations = relations
        self.isPublic = isPublic
        self.isEmbedded = isEmbedded
        self.isAsymmetric = isAsymmetric
        self.location = location
    }

    /// The type codes of an embedded object and of a list of them (`PropertyType.embedded` and
    /// `.embeddedList` in the runtime).
    public static let embeddedTypeCode = 101
    public static let embeddedListTypeCode = 1101

    /// The id property.
    public var idProperty: PropertyDescription? { properties.first { $0.isId } }

    /// The standalone to-many relations (kept in the model), without the backlinks.
    public var standaloneRelations: [RelationDescription] { relations.filter { $0.backlink == nil } }

    /// Whether the binding has relations to attach: a `ToOne` or a `ToMany`.
    public var hasRelations: Bool { !relations.isEmpty || properties.contains { $0.relationTarget != nil } }
}

/// An index over several properties of an entity: SwiftData's `#Index` (or `#Unique`).
public struct IndexDescription: Hashable, Sendable {
    /// The properties' model names, in key order.
    public var properties: [String]
    public var unique: Bool
    public var location: SourceLocation

    public init(properties: [String], unique: Bool, location: SourceLocation) {
        self.properties = properties
        self.unique = unique
        self.location = location
    }
}

/// A `ToMany<T>` property: a standalone many-to-many relation (in the model's `relations`, with an
/// ID and UID of its own) or, with `// cellar: backlink`, the other side of a `ToOne` or `ToMany`
/// of `T` (not in the model at all).
public struct RelationDescription: Hashable, Sendable {
    /// What a backlink is the other side of, in the target entity.
    public enum Backlink: Hashable, Sendable {
        /// The `ToOne<Owner>` property of the target with this model name.
        case toOne(property: String)
        /// The standalone `ToMany<Owner>` of the target with this model name.
        case relation(String)
        /// The `ToOne<Owner>` inside embedded objects of the target, by the model names of the
        /// path to it (`["tasks", "assignee"]`): a read-only backlink.
        case embeddedToOne(path: [String])
    }

    /// The Swift property's name.
    public var name: String
    /// The name in the model (`// cellar: name = "…"`, else `name`).
    public var modelName: String
    /// `T`'s qualified type name.
    public var target: String
    /// Resolved by the scanner for `// cellar: backlink`; nil for a standalone relation.
    public var backlink: Backlink?
    /// `// cellar: uid` (nil: no annotation; `.some(nil)`: the annotation without a value).
    public var uid: UInt64??
    /// `// cellar: onDelete = …`: what removing the owner does to the objects this relation (or
    /// backlink) reaches.
    public var deleteRule: DeleteRule?
    public var location: SourceLocation

    public init(name: String, modelName: String, target: String, backlink: Backlink? = nil, uid: UInt64?? = nil,
                deleteRule: DeleteRule? = nil, location: SourceLocation) {
        self.name = name
        self.deleteRule = deleteRule
        self.modelName = modelName
        self.target = target
        self.backlink = backlink
        self.uid = uid
        self.location = location
    }
}

/// A stored property of an entity (transient, static and computed ones are not described).
public struct PropertyDescription: Hashable, Sendable {
    /// How the Swift value becomes the stored value.
    public enum Conversion: Hashable, Sendable {
        /// Stored as it is (a built-in type).
        case none
        /// A `RawRepresentable` enum stored as its raw value (`swiftType` is the enum, the raw
        /// type is given by `propertyType`); `defaultCase` (e.g. `.unknown`) is read when the
        /// stored value is missing or not a case; nil for an optional enum without a default.
        case rawValue(defaultCase: String?)
        /// `// cellar: convert = { "dbType": "…", "converter": "…" }`: the converter type's
        /// `static func convert(_: SwiftType) -> DbType` and `static func convert(_: DbType?) -> SwiftType`
        /// (or with a non-optional parameter, which then gets the zero value of the database type).
        case converter(type: String, dbType: String)
    }

    /// The kind of index (`// cellar: index`, `index = "hash"`, …).
    public enum IndexKind: Hashable, Sendable {
        case value
        case hash
        case hash64
        /// `index = "fulltext"`: the words of a String (Cellar's extension, flag `fullTextIndex`).
        case fullText
        /// `index = "geo"` (or `index` on a GeoPoint): cells of points (flag `geoIndex`).
        case geo
        /// `hnsw = {…}` on a `[Float]`: an HNSW vector index (flag `indexed`, `hnswParams`).
        case hnsw
    }

    /// Gives the property an index of `kind`, with its flags (indexed, and hash or hash64).
    mutating func setIndex(_ kind: IndexKind, flags: inout PropertyFlags) {
        flags.insert(.indexed)
        index = kind
        switch kind {
        case .value: break
        case .hash: flags.insert(.indexHash)
        case .hash64: flags.insert(.indexHash64)
        case .fullText: flags.insert(.fullTextIndex)
        case .geo: flags.insert(.geoIndex)
        case .hnsw: break
        }
    }

    /// The Swift property's name.
    public var name: String
    /// The name in the model (`// cellar: name = "…"`, else `name`).
    public var modelName: String
    /// The type as written, without the optional marker (`String`, `EntityId<Note>`, `Status`).
    public var swiftType: String
    /// Declared optional (`String?`, `Optional<String>`).
    public var isOptional: Bool
    /// The stored type: type code, and the database Swift type it is read and written as
    /// (`"Int64"`, `"String"`, `"Date"`…, see `storedSwiftType`).
    public var propertyType: PropertyType
    /// The Swift type the record holds for this property: one of `Bool`, `Int8`, `Int16`,
    /// `Int32`, `Int64`, `Int`, `UInt8`…`UInt64`, `UInt`, `Float`, `Double`, `String`, `Date`,
    /// `Data`, `[UInt8]`, `UUID`; `Id` for ids and relations.
    public var storedSwiftType: String
    public var flags: PropertyFlags
    public var conversion: Conversion
    public var isId: Bool
    /// `// cellar: id = { "assignable": true }`.
    public var idAssignable: Bool
    /// The id is `EntityId<…>` rather than `Id`.
    public var isTypedId: Bool
    public var index: IndexKind?
    public var unique: Bool
    public var uniqueOnConflictReplace: Bool
    /// `// cellar: date-nano`.
    public var dateNano: Bool
    /// For a list, set or map: its shape, and the Swift type of its elements (of a map: of its
    /// values) as the record holds them (`String`, `Int`, `UUID`…).
    public var collection: CollectionShape?
    public var elementSwiftType: String?
    /// A `FlexValue` property.
    public var isFlex = false
    /// For `ToOne<T>`: `T`'s qualified type name.
    public var relationTarget: String?
    /// For `ToOne<T>`, `// cellar: onDelete = …`: what removing the owner does to its target.
    public var deleteRule: DeleteRule?
    /// For an embedded object (type code 101) or a list of them (1101): the embedded type's
    /// qualified Swift name.
    public var embeddedType: String?
    /// The HNSW index's parameters (`// cellar: hnsw = {…}`), as the model file keeps them.
    public var hnswParams: JSONValue?
    /// For a non-optional embedded object: its initial value as written (`Address()`), which a
    /// record without the object reads.
    public var embeddedInitializer: String?
    /// `// cellar: uid` (nil: no annotation; `.some(nil)`: the annotation without a value).
    public var uid: UInt64??
    /// What a record without this property reads, from `// cellar: default` or the initial value;
    /// nil for the stored type's zero value (no initial value, an optional, a ToOne, an enum with
    /// its convert default, a converter).
    public var defaultValue: DefaultValue?
    /// Why the initial value cannot be what a record written before the property existed reads
    /// (`Date()` and `UUID()` make a new value for each object; a function call cannot be
    /// evaluated), when it cannot. Such a property needs no default while no stored record can
    /// lack it: the model update refuses it, with this error, only when it is new to an entity
    /// (or embedded type) that the model file already has (`ModelUpdate`).
    public var initialValueProblem: GeneratorError?
    public var location: SourceLocation

    public init(name: String, modelName: String, swiftType: String, isOptional: Bool, propertyType: PropertyType,
                storedSwiftType: String, flags: PropertyFlags = [], conversion: Conversion = .none, isId: Bool = false,
                idAssignable: Bool = false, isTypedId: Bool = false, index: IndexKind? = nil, unique: Bool = false,
                uniqueOnConflictReplace: Bool = false, dateNano: Bool = false, relationTarget: String? = nil,
                embeddedType: String? = nil, uid: UInt64?? = nil, defaultValue: DefaultValue? = nil, location: SourceLocation) {
        self.name = name
        self.modelName = modelName
        self.swiftType = swiftType
        self.isOptional = isOptional
        self.propertyType = propertyType
        self.storedSwiftType = storedSwiftType
        self.flags = flags
        self.conversion = conversion
        self.isId = isId
        self.idAssignable = idAssignable
        self.isTypedId = isTypedId
        self.index = index
        self.unique = unique
        self.uniqueOnConflictReplace = uniqueOnConflictReplace
        self.dateNano = dateNano
        self.relationTarget = relationTarget
        self.embeddedType = embeddedType
        self.uid = uid
        self.defaultValue = defaultValue
        self.location = location
    }
}

extension PropertyDescription {
    /// Holds one embedded object (type code 101).
    public var isEmbeddedObject: Bool { embeddedType != nil && propertyType.rawValue == EntityDescription.embeddedTypeCode }
    /// Holds a list of embedded objects (type code 1101).
    public var isEmbeddedList: Bool { embeddedType != nil && propertyType.rawValue == EntityDescription.embeddedListTypeCode }
}
