import CellarStorage
import Foundation

/// A read-only view of a store for tools (the data browser, `cellar browse`): the stored model,
/// entities with their object counts, pages of decoded objects, single objects, their relations
/// as target ids, and the store's health. Objects are decoded with the model stored in the store,
/// as `cellar dump` decodes them: no generated code is needed.
///
/// The store is opened read-only (`StorageOptions.readOnly`): another process may write it at
/// the same time; every call starts a read transaction on the writer's newest commit, so a tool
/// sees new commits on its next call, and the writer is not disturbed. The model is read again in
/// each call, so entities a writer adds appear too.
///
/// Costs: a page in id order without a filter walks the keys up to its offset and decodes only
/// its own objects; `after` (an id cursor) seeks directly. A filter, or a sort by a property, is a
/// scan that decodes objects one by one (no index is used), bounded by
/// ``StoreInspector/PageRequest/scanLimit`` objects: ``StoreInspector/ObjectPage/scanCapped``
/// says when a page was computed on the first `scanLimit` objects (in id order) only.
///
/// Thread-safe: calls may run on several threads at once.
@_spi(Tools) public final class StoreInspector: Sendable {
    private let engine: StorageEngine

    /// The directory the store was opened in.
    public let directoryPath: String

    /// How many objects a filtered or property-sorted page decodes at most, unless its request
    /// says otherwise.
    public static let defaultScanLimit = 100_000

    /// Opens the store in `directoryPath` read-only, with `encryptionKey` when it is encrypted.
    /// Throws a ``CellarError`` when there is no store there, or the key is missing or wrong.
    public init(directoryPath: String, encryptionKey: EncryptionKey? = nil) throws {
        self.directoryPath = directoryPath
        engine = try translatingErrors {
            try StorageEngine(directory: directoryPath, options: StorageOptions(readOnly: true, encryptionKey: encryptionKey))
        }
    }

    /// Closes the store. No call may follow.
    public func close() { engine.close() }

    // MARK: - Model and entities

    /// The model stored in the store, at its newest commit; nil for a store of the storage
    /// engine alone.
    public func model() throws -> Model? {
        try translatingErrors { try engine.read { try StorageLayout.storedModel(in: $0) } }
    }

    /// The stored model as the text of a model JSON file; nil when the store holds none.
    public func modelJSON() throws -> String? { try model()?.jsonString() }

    /// One property of an entity as the inspector shows it.
    public struct Property: Sendable, Hashable {
        /// Its name (the id property's is the model's, which objects show as `id`).
        public var name: String
        /// Its type as the model file writes it (`String`, `Long`, `Relation`, …).
        public var type: String
        /// Whether it is the id property.
        public var isId: Bool
        /// Whether an index is declared on it.
        public var isIndexed: Bool
        /// For a to-one relation, the name of the entity its ids point to.
        public var target: String?
    }

    /// One standalone (to-many) relation of an entity.
    public struct Relation: Sendable, Hashable {
        /// Its name: an object shows its target ids under it.
        public var name: String
        /// The name of the entity its targets belong to (nil when the model does not have it).
        public var target: String?
    }

    /// One entity of the stored model (embedded types are left out: they have no objects of
    /// their own).
    public struct Entity: Sendable, Hashable {
        /// The entity's name.
        public var name: String
        /// How many objects it holds at the commit read.
        public var objectCount: Int
        /// Its properties in the model's order, the id property first as the model has it.
        public var properties: [Property]
        /// Its standalone relations.
        public var relations: [Relation]

        /// The names a page's columns show in order: `id`, the other properties, the standalone
        /// relations (the keys of a decoded object).
        public var columns: [String] {
            ["id"] + properties.filter { !$0.isId }.map(\.name) + relations.map(\.name)
        }
    }

    /// The entities of the stored model with their object counts, in the model's order (empty
    /// when the store holds no model).
    public func entities() throws -> [Entity] {
        try translatingErrors {
            try engine.read { txn in
                guard let model = try StorageLayout.storedModel(in: txn) else { return [] }
                return try model.entities.filter { !$0.isEmbedded }.map { try Self.entity($0, of: model, in: txn) }
            }
        }
    }

    /// The entity named `name`; nil when the stored model has no such entity (or only an
    /// embedded type of that name).
    public func entity(named name: String) throws -> Entity? {
        try translatingErrors {
            try engine.read { txn in
                guard let model = try StorageLayout.storedModel(in: txn),
                      let schema = model.entity(named: name), !schema.isEmbedded else { return nil }
                return try Self.entity(schema, of: model, in: txn)
            }
        }
    }

    private static func entity(_ schema: ModelEntity, of model: Model, in txn: ReadTransaction) throws -> Entity {
        let objects = try txn.tree(StorageLayout.entityTree(schema.id.id)).map { try txn.count($0) } ?? 0
        let properties = schema.properties.map { property in
            Property(name: property.name, type: "\(property.type)", isId: property.flags.contains(.id),
                     isIndexed: property.indexId != nil, target: property.type == .relation ? property.relationTarget : nil)
        }
        let relations = schema.relations.map { relation in
            Relation(name: relation.name, target: model.entities.first { $0.id.id == relation.targetId.id }?.name)
        }
        return Entity(name: schema.name, objectCount: objects, properties: properties, relations: relations)
    }

    // MARK: - Objects

    /// A link from an object to others: a to-one relation (one id, none when 0) or a standalone
    /// relation (its target ids).
    public struct Link: Sendable, Hashable {
        /// The relation's name (a to-one relation's property name).
        public var name: String
        /// The entity the ids belong to (nil when the model does not name it).
        public var target: String?
        /// The linked ids (a to-one relation that points nowhere has none).
        public var ids: [Id]
        /// Whether it is a standalone (to-many) relation.
        public var isToMany: Bool
    }

    /// One decoded object.
    public struct Object: Sendable, Hashable {
        /// The object's id.
        public var id: Id
        /// The object as `cellar dump --format jsonl` shows it: a JSON object whose members are
        /// `id`, the properties, and the standalone relations as arrays of ids.
        public var value: JSONValue
        /// Its relations, to-one first in property order, then standalone ones.
        public var links: [Link]

        /// The value of the member `name` (`.null` when the object has none).
        public subscript(name: String) -> JSONValue {
            guard case .object(let members) = value else { return .null }
            return members.first { $0.name == name }?.value ?? .null
        }
    }

    /// The order of a page.
    public enum Sort: Sendable, Hashable {
        /// By id: the store's key order, no scan needed.
        case id
        /// By the value of a property (a scan of the entity, bounded by the scan limit):
        /// `null` first, then `false` before `true`, numbers by value, text by its characters;
        /// objects with equal values in id order.
        case property(String)
    }

    /// Which objects a page holds.
    public struct PageRequest: Sendable, Hashable {
        /// A condition in the grammar of `cellar dump --where` (`title startsWith "A" and n > 2`);
        /// nil or blank for every object.
        public var filter: String?
        /// The order.
        public var sort: Sort
        /// Largest first.
        public var descending: Bool
        /// At most this many objects (1 or more).
        public var limit: Int
        /// How many objects of the order to skip first.
        public var offset: Int
        /// Only objects after this id in the order (before it when `descending`); id order only.
        public var after: Id?
        /// How many objects a filtered or property-sorted page decodes at most.
        public var scanLimit: Int

        /// A request; by default the first 50 objects in id order.
        public init(filter: String? = nil, sort: Sort = .id, descending: Bool = false, limit: Int = 50, offset: Int = 0,
                    after: Id? = nil, scanLimit: Int = StoreInspector.defaultScanLimit) {
            self.filter = filter
            self.sort = sort
            self.descending = descending
            self.limit = limit
            self.offset = offset
            self.after = after
            self.scanLimit = scanLimit
        }
    }

    /// A page of objects of one entity.
    public struct ObjectPage: Sendable, Hashable {
        /// The entity, with its object count at the commit the page was read on.
        public var entity: Entity
        /// The objects, in the order requested.
        public var objects: [Object]
        /// Whether more objects follow in the order (within the scanned ones, when capped).
        public var hasMore: Bool
        /// How many objects match in all, when the page knows it: the object count without a
        /// filter (and without `after`), the number of matches when the scan went through every
        /// object; nil when a filtered scan stopped once it had the page.
        public var matched: Int?
        /// How many objects were decoded to compute the page.
        public var scanned: Int
        /// Whether the scan stopped at the scan limit with objects left unread: the page then
        /// holds only what the first `scanLimit` objects (in id order) gave.
        public var scanCapped: Bool
    }

    /// A page of the objects of the entity `entity`; nil when the stored model has no such
    /// entity. Throws ``CellarError`` `illegalArgument` for a filter that does not parse (the
    /// message names the character), a sort by a name that is no property, a limit below 1, a
    /// negative offset, or `after` with a property order.
    public func page(of entity: String, _ request: PageRequest) throws -> ObjectPage? {
        guard request.limit >= 1 else { throw CellarError.illegalArgument("a page holds at least one object (limit \(request.limit))") }
        guard request.offset >= 0 else { throw CellarError.illegalArgument("a page's offset cannot be negative (\(request.offset))") }
        guard request.scanLimit >= 1 else { throw CellarError.illegalArgument("the scan limit must be at least 1") }
        return try translatingErrors {
            try engine.read { txn -> ObjectPage? in
                guard let model = try StorageLayout.storedModel(in: txn),
                      let schema = model.entity(named: entity), !schema.isEmbedded else { return nil }
                let info = try Self.entity(schema, of: model, in: txn)
                let condition = try request.filter.flatMap { text -> ObjectFilter? in
                    guard !text.allSatisfy(\.isWhitespace) else { return nil }
                    return try ObjectFilter.parse(text, knownNames: Set(info.columns))
                }
                let trees = try ObjectDump.EntityTrees(schema, in: txn)
                switch request.sort {
                case .id:
                    return try Self.pageInIdOrder(info, trees, model, condition, request, txn)
                case .property(let name):
                    guard name == "id" || info.properties.contains(where: { $0.name == name && !$0.isId }) else {
                        throw CellarError.illegalArgument("cannot sort \(entity) by \(name): it has no such property (\(info.columns.filter { n in !info.relations.contains { $0.name == n } }.joined(separator: ", ")))")
                    }
                    guard request.after == nil else {
                        throw CellarError.illegalArgument("after (an id cursor) needs the id order; page by offset when sorting by a property")
                    }
                    if name == "id" {
                        var byId = request
                        byId.sort = .id
                        return try Self.pageInIdOrder(info, trees, model, condition, byId, txn)
                    }
                    return try Self.pageSorted(by: name, info, trees, model, condition, request, txn)
                }
            }
        }
    }

    private static func pageInIdOrder(_ entity: Entity, _ trees: ObjectDump.EntityTrees, _ model: Model, _ condition: ObjectFilter?,
                                      _ request: PageRequest, _ txn: ReadTransaction) throws -> ObjectPage {
        var page = ObjectPage(entity: entity, objects: [], hasMore: false, matched: nil, scanned: 0, scanCapped: false)
        guard let tree = trees.objects else {
            page.matched = 0
            return page
        }
        var skip = request.offset
        var reachedEnd = true
        var matches = 0
        try txn.cursor(tree).scan(ObjectDump.range(after: request.after, descending: request.descending), reverse: request.descending) { key, record in
            if let condition {
                guard page.scanned < request.scanLimit else {
                    page.scanCapped = true
                    reachedEnd = false
                    return false
                }
                page.scanned += 1
                let object = try ObjectDump.decode(key: key, record: record, of: trees, model: model, in: txn)
                guard condition.matches(object) else { return true }
                matches += 1
                if skip > 0 { skip -= 1; return true }
                if page.objects.count == request.limit {
                    page.hasMore = true
                    reachedEnd = false
                    return false
                }
                page.objects.append(Self.object(object, of: trees.schema, model))
                return true
            }
            if skip > 0 { skip -= 1; return true }
            if page.objects.count == request.limit {
                page.hasMore = true
                return false
            }
            page.scanned += 1
            let object = try ObjectDump.decode(key: key, record: record, of: trees, model: model, in: txn)
            page.objects.append(Self.object(object, of: trees.schema, model))
            return true
        }
        if condition == nil {
            page.matched = request.after == nil ? entity.objectCount : nil
        } else if reachedEnd {
            page.matched = request.after == nil ? matches : nil
        }
        return page
    }

    private static func pageSorted(by name: String, _ entity: Entity, _ trees: ObjectDump.EntityTrees, _ model: Model,
                                   _ condition: ObjectFilter?, _ request: PageRequest, _ txn: ReadTransaction) throws -> ObjectPage {
        var page = ObjectPage(entity: entity, objects: [], hasMore: false, matched: 0, scanned: 0, scanCapped: false)
        guard let tree = trees.objects else { return page }
        var keys: [(value: JSONValue, id: Id)] = []
        try txn.cursor(tree).scan { key, record in
            guard page.scanned < request.scanLimit else {
                page.scanCapped = true
                return false
            }
            page.scanned += 1
            let object = try ObjectDump.decode(key: key, record: record, of: trees, model: model, in: txn)
            guard condition?.matches(object) ?? true else { return true }
            let decoded = Self.object(object, of: trees.schema, model)
            keys.append((decoded[name], decoded.id))
            return true
        }
        keys.sort { a, b in
            let order = Self.order(a.value, b.value)
            if order != 0 { return request.descending ? order > 0 : order < 0 }
            return a.id < b.id
        }
        page.matched = keys.count
        let window = keys.dropFirst(request.offset).prefix(request.limit)
        page.hasMore = request.offset + window.count < keys.count
        for entry in window {
            guard let object = try ObjectDump.object(id: entry.id, of: trees, model: model, in: txn) else { continue }
            page.objects.append(Self.object(object, of: trees.schema, model))
        }
        return page
    }

    /// The object of the entity `entity` with `id`; nil when the model has no such entity or
    /// the entity no such object.
    public func object(of entity: String, id: Id) throws -> Object? {
        try translatingErrors {
            try engine.read { txn -> Object? in
                guard let model = try StorageLayout.storedModel(in: txn),
                      let schema = model.entity(named: entity), !schema.isEmbedded else { return nil }
                let trees = try ObjectDump.EntityTrees(schema, in: txn)
                return try ObjectDump.object(id: id, of: trees, model: model, in: txn).map { Self.object($0, of: schema, model) }
            }
        }
    }

    /// `value` (a decoded object of `schema`) with its id and links.
    private static func object(_ value: JSONValue, of schema: ModelEntity, _ model: Model) -> Object {
        var object = Object(id: 0, value: value, links: [])
        if case .number(let text) = object["id"] { object.id = Id(text) ?? 0 }
        for property in schema.properties where property.type == .relation {
            var ids: [Id] = []
            if case .number(let text) = object[property.name], let id = Id(text), id != 0 { ids = [id] }
            object.links.append(Link(name: property.name, target: property.relationTarget, ids: ids, isToMany: false))
        }
        // Standalone relations name their target by id; `decode` wrote their ids as arrays.
        for relation in schema.relations {
            let target = model.entities.first { $0.id.id == relation.targetId.id }?.name
            var ids: [Id] = []
            if case .array(let elements) = object[relation.name] {
                ids = elements.compactMap { if case .number(let text) = $0 { return Id(text) } else { return nil } }
            }
            object.links.append(Link(name: relation.name, target: target, ids: ids, isToMany: true))
        }
        return object
    }

    /// `value` as compact JSON text (strings quoted and escaped), as `cellar dump` writes it.
    public static func jsonText(_ value: JSONValue) -> String { JSONWriter.compact(value) }

    /// The order of two decoded values: negative, zero or positive. `null` first, then booleans,
    /// numbers (exactly as integers when both are, else as doubles), text, and the rest by their
    /// JSON text.
    static func order(_ a: JSONValue, _ b: JSONValue) -> Int {
        func rank(_ value: JSONValue) -> Int {
            switch value {
            case .null: return 0
            case .bool: return 1
            case .number: return 2
            case .string: return 3
            case .array: return 4
            case .object: return 5
            }
        }
        func compare<T: Comparable>(_ x: T, _ y: T) -> Int { x == y ? 0 : (x < y ? -1 : 1) }
        switch (a, b) {
        case (.bool(let x), .bool(let y)): return compare(x ? 1 : 0, y ? 1 : 0)
        case (.number(let x), .number(let y)):
            if let i = Int64(x), let j = Int64(y) { return compare(i, j) }
            if let i = UInt64(x), let j = UInt64(y) { return compare(i, j) }
            return compare(Double(x) ?? .nan, Double(y) ?? .nan)
        case (.string(let x), .string(let y)): return compare(x, y)
        default:
            let ranks = compare(rank(a), rank(b))
            return ranks != 0 ? ranks : compare(JSONWriter.compact(a), JSONWriter.compact(b))
        }
    }

    // MARK: - Health

    /// The store's size, garbage and identity at its newest commit.
    public struct Health: Sendable, Hashable {
        /// The store's UUID, as text.
        public var storeUUID: String
        /// The newest commit's transaction id.
        public var lastCommit: UInt64
        /// The bytes of the store file up to its newest commit.
        public var fileBytes: UInt64
        /// The bytes still reachable from the newest commit.
        public var liveBytes: UInt64
        /// The share of the file that is garbage (0…1): what a compaction would reclaim.
        public var garbageShare: Double
        /// Whether the store is encrypted at rest.
        public var isEncrypted: Bool
        /// Whether the store holds a model (else it is a store of the storage engine alone).
        public var hasModel: Bool
    }

    /// The store's health, after following the writer to its newest commit.
    public func health() throws -> Health {
        try translatingErrors {
            // A read-only engine follows the writer when a read transaction begins: read first.
            let hasModel = try engine.read { try StorageLayout.storedModel(in: $0) != nil }
            let size = engine.fileSize
            let live = min(engine.liveBytes, size)
            return Health(storeUUID: "\(engine.uuid)", lastCommit: engine.lastTransactionId, fileBytes: size, liveBytes: live,
                          garbageShare: size == 0 ? 0 : Double(size - live) / Double(size), isEncrypted: engine.isEncrypted,
                          hasModel: hasModel)
        }
    }
}
