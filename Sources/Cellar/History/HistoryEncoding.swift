import CellarStorage

/// How a history entry is stored: the value under its sequence number (8 bytes, big-endian) in
/// the history tree (`StorageLayout.historyTree`). All integers little-endian; "varint" is
/// LEB128 (7 bits a byte, low first, at most 10 bytes).
///
/// ```
/// u8      format version: 1
/// u64     timestamp (HybridTimestamp.rawValue)
/// varint  number of entities
/// per entity, by UID:
///   u64     entity UID
///   varint  number of property IDs, then each (varint): the entity's properties but the id,
///           as of the commit ("every property" of an object new in it)
///   varint  number of objects
///   per object, ascending by id:
///     varint  id minus the previous object's id (the first: minus 0); at least 1
///     u8      0 = put, listed properties; 1 = remove; 2 = put, every property
///     for 0: varint count, then the property IDs (varint, ascending)
///     for 0 and 2: varint count, then the changed relation IDs (varint, ascending)
/// ```
///
/// Decoding checks every length and count against the bytes there are, and throws
/// `fileCorrupt` for what does not read (never traps).
enum HistoryEncoding {
    static let version: UInt8 = 1

    /// One entity's changes in an entry, as recorded.
    struct EntityChanges {
        var entityUid: UInt64
        /// The entity's property IDs but the id's, ascending ("every property").
        var allProperties: [UInt32]
        var objects: [ObjectChange]
    }

    /// One object's change; `properties` nil means every property.
    struct ObjectChange: Equatable {
        var id: Id
        var remove: Bool
        var properties: [UInt32]?
        var relations: [UInt32]
    }

    static func encode(timestamp: HybridTimestamp, entities: [EntityChanges]) -> [UInt8] {
        let writer = Writer(timestamp: timestamp, entityCount: entities.count)
        for entity in entities {
            writer.beginEntity(uid: entity.entityUid, allProperties: entity.allProperties, objectCount: entity.objects.count)
            for object in entity.objects {
                writer.object(id: object.id, remove: object.remove, properties: object.properties, relations: object.relations)
            }
        }
        return Array(writer.bytes)
    }

    /// Writes an entry: `beginEntity` for each entity (ascending UIDs), then `object` as many
    /// times as it said (ascending ids), each call into room for the most its part can take
    /// (a ``CursorBuffer``: an entry of 100,000 updated objects is written once a commit).
    ///
    /// Unchecked exclusivity: one commit (one thread) owns it.
    final class Writer {
        @exclusivity(unchecked) private var buffer: CursorBuffer
        @exclusivity(unchecked) private var previous: Id = 0

        /// An entry's first bytes; `capacity` is a guess at its size (it grows as needed).
        init(timestamp: HybridTimestamp, entityCount: Int, capacity: Int = 64) {
            buffer = CursorBuffer(capacity: capacity)
            var out = buffer.room(1 + 8 + Varint.maxBytes)
            out = CursorBuffer.put(version, at: out)
            out = CursorBuffer.put(timestamp.rawValue, at: out)
            buffer.end(at: Varint.put(UInt64(entityCount), at: out))
        }

        /// The entry written so far; valid until the next call.
        var bytes: UnsafeRawBufferPointer { buffer.bytes }

        func beginEntity(uid: UInt64, allProperties: [UInt32], objectCount: Int) {
            var out = buffer.room(8 + Varint.maxBytes * (allProperties.count + 2))
            out = CursorBuffer.put(uid, at: out)
            out = Varint.put(UInt64(allProperties.count), at: out)
            for property in allProperties { out = Varint.put(UInt64(property), at: out) }
            buffer.end(at: Varint.put(UInt64(objectCount), at: out))
            previous = 0
        }

        /// `properties` nil: every property.
        @inline(__always)
        func object<P: Collection<UInt32>, R: Collection<UInt32>>(id: Id, remove: Bool, properties: P?, relations: R) {
            // The id's varint and the kind; the counts' varints and each ID's (an ID fits in 5).
            var out = buffer.room(Varint.maxBytes + 1 + 2 * Varint.maxBytes + 5 * ((properties?.count ?? 0) + relations.count))
            out = Varint.put(id &- previous, at: out)
            previous = id
            if remove {
                buffer.end(at: CursorBuffer.put(UInt8(1), at: out))
                return
            }
            if let properties {
                out = CursorBuffer.put(UInt8(0), at: out)
                out = Varint.put(UInt64(properties.count), at: out)
                for property in properties { out = Varint.put(UInt64(property), at: out) }
            } else {
                out = CursorBuffer.put(UInt8(2), at: out)
            }
            out = Varint.put(UInt64(relations.count), at: out)
            for relation in relations { out = Varint.put(UInt64(relation), at: out) }
            buffer.end(at: out)
        }
    }

    /// The entry stored as `bytes` under `sequence`; names come from `model` (by UID and ID).
    static func decode(sequence: UInt64, _ bytes: UnsafeRawBufferPointer, model: HistoryNames) throws -> HistoryEntry {
        var reader = Reader(bytes: bytes, sequence: sequence)
        let format = try reader.byte()
        guard format == version else {
            throw CellarError.fileCorrupt("history entry \(sequence) has format \(format); this build reads format \(version)")
        }
        let timestamp = HybridTimestamp(rawValue: try reader.fixed())
        let entityCount = try reader.count()
        var changes: [HistoryChange] = []
        var previousUid: UInt64?
        for _ in 0..<entityCount {
            let uid = try reader.fixed()
            if let previousUid, uid <= previousUid { throw reader.corrupt("its entities are out of order") }
            previousUid = uid
            let names = model.entity(uid)
            let all = try reader.ids()
            let objectCount = try reader.count()
            var id: Id = 0
            for _ in 0..<objectCount {
                let delta = try reader.varint()
                guard delta > 0, delta <= Id.max - id else { throw reader.corrupt("its object ids are out of order") }
                id += delta
                let kind = try reader.byte()
                var change = HistoryChange(entityUid: uid, entityName: names?.name, id: id, operation: .put)
                switch kind {
                case 1:
                    change.operation = .remove
                case 0, 2:
                    change.changedPropertyIds = kind == 2 ? all : try reader.ids()
                    change.changedRelationIds = try reader.ids()
                    if let names {
                        change.changedPropertyNames = change.changedPropertyIds.compactMap { names.properties[$0] }
                    }
                default:
                    throw reader.corrupt("an object's change has kind \(kind)")
                }
                changes.append(change)
            }
        }
        guard reader.atEnd else { throw reader.corrupt("\(bytes.count - reader.position) bytes follow its end") }
        return HistoryEntry(sequence: sequence, timestamp: timestamp, changes: changes)
    }

    // MARK: Bytes

    static func appendFixed(_ value: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    /// Reads an entry's bytes, checking each read against their end.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        let sequence: UInt64
        var position = 0

        var atEnd: Bool { position == bytes.count }

        func corrupt(_ what: String) -> CellarError {
            CellarError.fileCorrupt("history entry \(sequence) does not read: \(what)")
        }

        mutating func byte() throws -> UInt8 {
            guard position < bytes.count else { throw corrupt("it ends early") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func fixed() throws -> UInt64 {
            guard bytes.count - position >= 8 else { throw corrupt("it ends early") }
            defer { position += 8 }
            return bytes.loadLE(UInt64.self, at: position)
        }

        mutating func varint() throws -> UInt64 {
            do {
                return try Varint.read(bytes, at: &position)
            } catch .truncated {
                throw corrupt("it ends early")
            } catch .overflows {
                throw corrupt("a number is longer than 64 bits")
            } catch .overlong {
                throw corrupt("a number is encoded overlong")
            }
        }

        /// A count of things that take at least a byte each: not more than the bytes left.
        mutating func count() throws -> Int {
            let count = try varint()
            guard count <= UInt64(bytes.count - position) else { throw corrupt("a count of \(count) exceeds its bytes") }
            return Int(count)
        }

        /// A count, then as many IDs (u32 each, ascending).
        mutating func ids() throws -> [UInt32] {
            let count = try self.count()
            var ids: [UInt32] = []
            ids.reserveCapacity(count)
            for _ in 0..<count {
                let id = try varint()
                guard id <= UInt64(UInt32.max), ids.last.map({ UInt32(id) > $0 }) ?? true else {
                    throw corrupt("its property or relation IDs are out of order")
                }
                ids.append(UInt32(id))
            }
            return ids
        }
    }
}

/// The names a history entry's UIDs and IDs have in a model.
struct HistoryNames {
    struct Entity {
        var name: String
        var properties: [UInt32: String]
    }

    let entities: [UInt64: Entity]

    init(_ model: Model) {
        entities = Dictionary(model.entities.map { entity in
            (entity.id.uid, Entity(name: entity.name, properties: Dictionary(entity.properties.map { ($0.id.id, $0.name) },
                                                                             uniquingKeysWith: { a, _ in a })))
        }, uniquingKeysWith: { a, _ in a })
    }

    func entity(_ uid: UInt64) -> Entity? { entities[uid] }
}
