@_spi(CellarGenerated) import Cellar

// The vector workload of the HNSW kill -9 test (CellarVectorCrashChild writes it, VectorCrashTests
// replays it): an entity with an HNSW-indexed embedding, a progress entity, and a deterministic
// sequence of write transactions that insert, update and remove vectors.
//
// The bindings are written by hand the way the generator writes them (so that the child and the
// tests share one entity without a model file in this target).

/// A document with an 8-dimensional embedding (cosine, M = 12, efConstruction = 64; nil: no
/// vector); `key` names it in the workload's model (ids are the store's).
public final class VectorDoc: Entity, EntityInspectable {
    public var id: Id = 0
    public var key: Int64 = 0
    public var embedding: [Float]?

    public init() {}

    public init(key: Int64, embedding: [Float]?) {
        self.key = key
        self.embedding = embedding
    }

    public static let entityBinding = VectorDocBinding()

    public static let id = Property<VectorDoc>(name: "id", id: 1, type: PropertyType(rawValue: 6))
    public static let key = Property<VectorDoc>(name: "key", id: 2, type: PropertyType(rawValue: 6))
    public static let embedding = Property<VectorDoc>(name: "embedding", id: 3, type: PropertyType(rawValue: 28))
}

public struct VectorDocBinding: EntityBinding {
    public typealias EntityType = VectorDoc
    public init() {}
    public var entityName: String { "VectorDoc" }
    public var entityId: IdUid { IdUid(id: 1, uid: 7_310_418_552_001) }
    public var slotCount: Int { 3 }
    public func id(of entity: VectorDoc) -> Id { entity.id }
    public func setId(_ id: Id, of entity: inout VectorDoc) { entity.id = id }

    public func write(_ entity: VectorDoc, to record: RecordBuilder) throws {
        record.add(entity.key, slot: 1)
        try record.add(entity.embedding, slot: 2)
    }

    public func read(id: Id, from record: RecordReader) throws -> VectorDoc {
        let entity = VectorDoc()
        entity.id = id
        entity.key = try record.read(Int64.self, slot: 1) ?? 0
        entity.embedding = try record.list(Float.self, slot: 2)
        return entity
    }
}

/// How far the workload got: one object (id 1) holding the number of the last transaction,
/// written in that transaction.
public final class VectorProgress: Entity, EntityInspectable {
    public var id: Id = 0
    public var commit: Int64 = 0

    public init() {}

    public static let entityBinding = VectorProgressBinding()
}

public struct VectorProgressBinding: EntityBinding {
    public typealias EntityType = VectorProgress
    public init() {}
    public var entityName: String { "VectorProgress" }
    public var entityId: IdUid { IdUid(id: 2, uid: 7_310_418_552_101) }
    public var slotCount: Int { 2 }
    public func id(of entity: VectorProgress) -> Id { entity.id }
    public func setId(_ id: Id, of entity: inout VectorProgress) { entity.id = id }

    public func write(_ entity: VectorProgress, to record: RecordBuilder) throws {
        record.add(entity.commit, slot: 1)
    }

    public func read(id: Id, from record: RecordReader) throws -> VectorProgress {
        let entity = VectorProgress()
        entity.id = id
        entity.commit = try record.read(Int64.self, slot: 1) ?? 0
        return entity
    }
}

public enum VectorWorkload {
    public static let dimensions = 8

    /// The model of the two entities.
    public static func model() -> Cellar.Model {
        let index = IdUid(id: 1, uid: 7_310_418_552_010)
        let hnsw = JSONValue.object([
            JSONMember("dimensions", .number("8")), JSONMember("distanceType", .string("cosine")),
            JSONMember("neighborsPerNode", .number("12")), JSONMember("indexingSearchCount", .number("64")),
        ])
        let doc = ModelEntity(
            name: "VectorDoc", id: IdUid(id: 1, uid: 7_310_418_552_001), lastPropertyId: IdUid(id: 3, uid: 7_310_418_552_004),
            properties: [
                ModelProperty(name: "id", id: IdUid(id: 1, uid: 7_310_418_552_002), type: PropertyType(rawValue: 6), flags: .id),
                ModelProperty(name: "key", id: IdUid(id: 2, uid: 7_310_418_552_003), type: PropertyType(rawValue: 6)),
                ModelProperty(name: "embedding", id: IdUid(id: 3, uid: 7_310_418_552_004), type: PropertyType(rawValue: 28),
                              flags: .indexed, indexId: index, hnswParams: hnsw),
            ])
        let progress = ModelEntity(
            name: "VectorProgress", id: IdUid(id: 2, uid: 7_310_418_552_101), lastPropertyId: IdUid(id: 2, uid: 7_310_418_552_103),
            properties: [
                ModelProperty(name: "id", id: IdUid(id: 1, uid: 7_310_418_552_102), type: PropertyType(rawValue: 6), flags: .id),
                ModelProperty(name: "commit", id: IdUid(id: 2, uid: 7_310_418_552_103), type: PropertyType(rawValue: 6)),
            ])
        return Cellar.Model(entities: [doc, progress], lastEntityId: progress.id, lastIndexId: index)
    }

    /// One change of a transaction.
    public enum Operation: Equatable, Sendable {
        /// Stores `vector` under `key` (empty: no vector, nil in the object): a new object, or an update.
        case put(key: Int64, vector: [Float])
        case remove(key: Int64)
    }

    /// What a transaction mostly does, by its number: the kills land in each kind.
    public enum Kind: String, Sendable, CaseIterable {
        case insert, update, remove
    }

    /// Inserts for the first 4, then removes, inserts and updates in turn; inserts instead of
    /// removes below 150 live objects, removes instead of inserts above 400.
    public static func kind(of k: Int, state: State) -> Kind {
        let kind = k <= 4 ? .insert : Kind.allCases[k % 3]
        if state.count < 150 && kind == .remove { return .insert }
        if state.count > 400 && kind == .insert { return .remove }
        return kind
    }

    /// The content after some transactions: each key's vector (empty: the object has none).
    public typealias State = [Int64: [Float]]

    /// Transaction `k` (1-based) of the workload with `seed`, on the state the transactions before
    /// it left: 6 to 20 changes, mostly of `kind(of: k, state: state)`; about 1 in 12 puts
    /// stores no vector.
    public static func transaction(_ k: Int, seed: UInt64, state: State) -> [Operation] {
        var rng = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(k))
        let keys = state.keys.sorted()
        let kind = kind(of: k, state: state)
        let count = 6 + Int(rng.next() % 15)
        var operations: [Operation] = []
        var nextKey = Int64(k) * 1_000
        func vector(_ rng: inout SplitMix64) -> [Float] {
            rng.next() % 12 == 0 ? [] : Self.vector(&rng, seed: seed)
        }
        for _ in 0..<count {
            // Most changes are of the transaction's kind, one in four of another.
            var chosen = kind
            if rng.next() % 4 == 0 { chosen = Kind.allCases[Int(rng.next() % 3)] }
            if keys.isEmpty { chosen = .insert }
            switch chosen {
            case .insert:
                nextKey += 1
                operations.append(.put(key: nextKey, vector: vector(&rng)))
            case .update:
                operations.append(.put(key: keys[Int(rng.next() % UInt64(keys.count))], vector: vector(&rng)))
            case .remove:
                // Removing a key twice, or one this transaction put, is allowed: the last change wins.
                operations.append(.remove(key: keys[Int(rng.next() % UInt64(keys.count))]))
            }
        }
        return operations
    }

    /// Applies `operations` to `state`.
    public static func apply(_ operations: [Operation], to state: inout State) {
        for operation in operations {
            switch operation {
            case let .put(key, vector): state[key] = vector
            case let .remove(key): state[key] = nil
            }
        }
    }

    /// The state after the first `commits` transactions.
    public static func state(after commits: Int, seed: UInt64) -> State {
        var state: State = [:]
        for k in stride(from: 1, through: commits, by: 1) { apply(transaction(k, seed: seed, state: state), to: &state) }
        return state
    }

    /// A unit vector near one of 12 centres fixed by `seed`.
    public static func vector(_ rng: inout SplitMix64, seed: UInt64) -> [Float] {
        var centres = SplitMix64(seed: seed ^ 0xC0FF_EE00)
        let all = (0..<12).map { _ in (0..<dimensions).map { _ in uniform(&centres) * 2 - 1 } }
        var point = all[Int(rng.next() % 12)]
        for d in 0..<dimensions { point[d] += (uniform(&rng) - 0.5) * 0.6 }
        let norm = point.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return norm > 0 ? point.map { $0 / norm } : vector(&rng, seed: seed)
    }

    /// A uniform value in 0..<1.
    public static func uniform(_ rng: inout SplitMix64) -> Float {
        Float(rng.next() >> 40) / Float(1 << 24)
    }

    /// Query vectors for the checks.
    public static func queries(_ count: Int, seed: UInt64) -> [[Float]] {
        var rng = SplitMix64(seed: seed ^ 0x5EED)
        return (0..<count).map { _ in vector(&rng, seed: seed) }
    }

    /// Cosine distance.
    public static func distance(_ a: [Float], _ b: [Float]) -> Float {
        var (dot, na, nb): (Float, Float, Float) = (0, 0, 0)
        for i in a.indices { dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i] }
        return 1 - dot / (na.squareRoot() * nb.squareRoot())
    }
}

/// Commits workload transactions into a store: each one's changes and the progress object, in
/// one write transaction.
public final class VectorWorkloadWriter {
    public let store: Store
    public let docs: Box<VectorDoc>
    let progress: Box<VectorProgress>
    /// The id of each key's object.
    public private(set) var ids: [Int64: Id] = [:]
    /// The number of the last transaction committed.
    public private(set) var commits: Int
    /// The content after `commits` transactions.
    public private(set) var state: VectorWorkload.State
    let seed: UInt64
    var progressId: Id

    /// Reads how far the store got (its progress object and objects).
    public init(store: Store, seed: UInt64) throws {
        self.store = store
        self.seed = seed
        docs = store.box(for: VectorDoc.self)
        progress = store.box(for: VectorProgress.self)
        let stored = try progress.all().first
        progressId = stored?.id ?? 0
        commits = Int(stored?.commit ?? 0)
        state = VectorWorkload.state(after: commits, seed: seed)
        for doc in try docs.all() { ids[doc.key] = doc.id }
    }

    struct RollBack: Error {}

    /// Runs a transaction of changes like the next one's (other vectors, other keys) that does
    /// not commit: it throws at the end, and the store must be as it was.
    public func rollBack() throws {
        let k = commits + 1
        let operations = VectorWorkload.transaction(k, seed: seed ^ 0x0BAD_C0DE, state: state)
        do {
            try store.runInTransaction {
                for operation in operations {
                    switch operation {
                    case let .put(key, vector):
                        let doc = VectorDoc(key: key, embedding: vector.isEmpty ? nil : vector)
                        doc.id = ids[key] ?? 0
                        try docs.put(doc)
                    case let .remove(key):
                        if let id = ids[key] { _ = try docs.remove(id) }
                    }
                }
                // A search inside the transaction applies its changes to the graph in memory.
                _ = try docs.query { VectorDoc.embedding.nearestNeighbors(to: VectorWorkload.queries(1, seed: UInt64(k))[0], maxCount: 5) }
                    .build().findIds()
                throw RollBack()
            }
        } catch is RollBack {}
    }

    /// Commits the next transaction; returns its number.
    @discardableResult
    public func commitNext() throws -> Int {
        let k = commits + 1
        let operations = VectorWorkload.transaction(k, seed: seed, state: state)
        var newIds = ids
        var newProgressId = progressId
        try store.runInTransaction {
            for (n, operation) in operations.enumerated() {
                // In every fifth transaction, a search halfway: the graph takes the changes so
                // far, and the rest at the commit.
                if k % 5 == 0 && n == operations.count / 2 {
                    _ = try docs.query { VectorDoc.embedding.nearestNeighbors(to: VectorWorkload.queries(1, seed: UInt64(k))[0], maxCount: 5) }
                        .build().findIds()
                }
                switch operation {
                case let .put(key, vector):
                    let doc = VectorDoc(key: key, embedding: vector.isEmpty ? nil : vector)
                    doc.id = newIds[key] ?? 0
                    newIds[key] = try docs.put(doc).value
                case let .remove(key):
                    if let id = newIds.removeValue(forKey: key) { _ = try docs.remove(id) }
                }
            }
            let mark = VectorProgress()
            mark.id = newProgressId
            mark.commit = Int64(k)
            newProgressId = try progress.put(mark).value
        }
        ids = newIds
        progressId = newProgressId
        VectorWorkload.apply(operations, to: &state)
        commits = k
        return k
    }
}
