import CellarStorage
import Foundation

/// One undoable write: for each object it changed, the properties it changed and their fields
/// before and after it (the whole record where the object was not there before, or after: created
/// or removed by the write), and for each standalone relation whose links of the object changed,
/// the targets before and after. Fields are kept as stored (as records holding only those
/// fields), so that keeping a step copies bytes and formats nothing. Kept in the store (see
/// ``UndoLog``) as:
///
/// ```
/// u8 format (1), name (u32 length, UTF-8), u32 object count, then per object:
///   u64 entity UID, u64 id, u8 which records follow (1: before, 2: after),
///   with both: u32 count and u32 IDs of the properties changed,
///   each record as u32 length and bytes, u32 relation count,
///   per relation: u32 relation ID, u32 count and u64 ids before, u32 count and u64 ids after
/// ```
/// (little-endian).
struct UndoStep {
    struct Object {
        var entityUid: UInt64
        var id: Id
        /// The stored record; nil: the object was not there (created by the step, or, for
        /// `after`, removed). When both are there, they hold only the fields of `changed`.
        var before: [UInt8]?
        var after: [UInt8]?
        /// When the object was there before and after: the IDs of the properties the step
        /// changed (a field missing from `before` or `after` was absent, nil).
        var changed: [UInt32] = []
        /// By relation ID: the targets before and after.
        var links: [UInt32: (before: [Id], after: [Id])] = [:]
    }

    var name: String
    var objects: [Object]

    init(name: String, objects: [Object]) {
        self.name = name
        self.objects = objects
    }

    /// What the write running in `context` has changed so far, compared with the state it began
    /// from (its base snapshot).
    static func capture(_ name: String, in context: TransactionContext) throws -> UndoStep {
        let store = context.store
        guard let history = context.history, let write = context.write else {
            throw CellarError.illegalArgument("an undoable write needs the store's change history (StoreOptions.changeHistory)")
        }
        let base = TransactionContext(store: store, read: try write.readBase())
        let builder = RecordBuilder(capacity: 1024)
        var objects: [Object] = []
        for touched in history.touchedObjects() {
            guard let schema = store.schemasById[touched.entity] else { continue }
            var object = Object(entityUid: schema.id.uid, id: touched.id)
            try base.withRecord(schema, touched.id) { before in
                try context.withRecord(schema, touched.id) { after in
                    guard let before, let after else {
                        object.before = before.map { Array($0) }
                        object.after = after.map { Array($0) }
                        return
                    }
                    // Only the fields the step changed, each side as a record of its own.
                    let old = try RecordReader(before), new = try RecordReader(after)
                    try HistoryRecorder.changedProperties(of: schema, old: old, new: new, into: &object.changed)
                    guard !object.changed.isEmpty else { return }
                    object.before = try Self.fields(object.changed, of: old, schema: schema, builder: builder)
                    object.after = try Self.fields(object.changed, of: new, schema: schema, builder: builder)
                }
            }
            for relation in touched.relations.sorted() {
                let tree = StorageLayout.relationTree(relation)
                let before = try base.pairedIds(touched.id, in: tree), after = try context.pairedIds(touched.id, in: tree)
                if Set(before) != Set(after) { object.links[relation] = (before, after) }
            }
            let valuesChanged = switch (object.before, object.after) {
            case (nil, nil): false          // made and removed by the step
            case (.some, .some): !object.changed.isEmpty
            default: true
            }
            if valuesChanged || !object.links.isEmpty { objects.append(object) }
        }
        return UndoStep(name: name, objects: objects)
    }

    /// A record with `record`'s fields of the properties `ids` only.
    private static func fields(_ ids: [UInt32], of record: RecordReader, schema: EntitySchema, builder: RecordBuilder) throws -> [UInt8] {
        builder.begin(slotCount: record.slotCount)
        for id in ids.sorted() {
            guard let property = schema.properties[id], property.slot < record.slotCount else { continue }
            try builder.copyField(property.slot, of: property.type, from: record)
        }
        return Array(builder.finished)
    }

    /// Undoes the step (`reverse`) or does it again, in `context`: per property, the value the
    /// step left (or, redoing, found) is replaced when the object still holds it; a property
    /// changed since keeps its newer value. An object the step created is removed; one it
    /// removed is put back with its values, unless an object is stored under its id again. Links
    /// the step added are removed and links it removed are added back, each only when it is not
    /// already so. Returns the number of properties and links kept because they changed since.
    func apply(reverse: Bool, in context: TransactionContext) throws -> Int {
        let store = context.store
        var kept = 0
        let builder = RecordBuilder(capacity: 1024)
        for object in objects {
            guard let schema = store.schemas[object.entityUid] else { continue }
            let (found, wanted) = reverse ? (object.after, object.before) : (object.before, object.after)
            let current = try context.withRecord(schema, object.id) { $0.map { Array($0) } }
            let record: [UInt8]
            switch (found, wanted) {
            case (nil, nil):
                continue
            case (_, nil):
                if current != nil { _ = try context.removeObject(schema, id: object.id) }
                continue
            case (nil, let values?):
                guard current == nil else { kept += 1; continue }
                record = values
            case (let left?, let values?):
                guard let current else { kept += 1; continue }
                guard let merged = try Self.merge(current, replacing: left, with: values, changed: object.changed, schema: schema,
                                                  builder: builder, kept: &kept) else { continue }
                record = merged
            }
            try record.withUnsafeBytes { bytes in
                try context.putIndexed(schema, id: object.id, record: bytes, tree: try context.writeTree(schema), isNew: current == nil)
            }
            try context.withSequence(schema) { $0.noteAssigned(object.id) }
            context.changeLog?.note(schema, object.id)
        }
        // Links after every object is back: a link may point at an object put back above.
        for object in objects where !object.links.isEmpty {
            guard let schema = store.schemas[object.entityUid], try context.contains(schema, object.id) else {
                kept += object.links.count
                continue
            }
            for (relation, targets) in object.links.sorted(by: { $0.key < $1.key }) {
                guard let target = schema.relations.first(where: { $0.id.id == relation }).flatMap({ store.schemasById[$0.targetId.id] }) else { continue }
                let (found, wanted) = reverse ? (Set(targets.after), Set(targets.before)) : (Set(targets.before), Set(targets.after))
                let current = Set(try context.pairedIds(object.id, in: StorageLayout.relationTree(relation)))
                for gone in found.subtracting(wanted).sorted() {
                    if current.contains(gone) {
                        try context.setLink(object.id, gone, link: .relation(relation), linked: false, targetSchema: target)
                    } else {
                        kept += 1
                    }
                }
                for back in wanted.subtracting(found).sorted() {
                    if !current.contains(back), try context.contains(target, back) {
                        try context.setLink(object.id, back, link: .relation(relation), linked: true, targetSchema: target)
                    } else {
                        kept += 1
                    }
                }
            }
        }
        return kept
    }

    /// `current` with each property of `changed` set to its field in `values` (absent there:
    /// absent), where `current` still holds its field in `left` (the others are counted in
    /// `kept`); nil when nothing changes.
    private static func merge(_ current: [UInt8], replacing left: [UInt8], with values: [UInt8], changed: [UInt32],
                              schema: EntitySchema, builder: RecordBuilder, kept: inout Int) throws -> [UInt8]? {
        try current.withUnsafeBytes { currentBytes in
            try left.withUnsafeBytes { leftBytes in
                try values.withUnsafeBytes { valueBytes in
                    let now = try RecordReader(currentBytes), old = try RecordReader(leftBytes), new = try RecordReader(valueBytes)
                    var taken = Set<UInt32>()
                    for id in changed {
                        guard let property = schema.properties[id] else { continue }
                        let held = try field(now, property)
                        if held == (try field(old, property)) {
                            if held != (try field(new, property)) { taken.insert(id) }
                        } else {
                            kept += 1
                        }
                    }
                    guard !taken.isEmpty else { return nil }
                    let slots = max(now.slotCount, new.slotCount)
                    builder.begin(slotCount: slots)
                    for property in schema.properties.values.sorted(by: { $0.id < $1.id }) where !property.isId && property.slot < slots {
                        try builder.copyField(property.slot, of: property.type, from: taken.contains(property.id) ? new : now)
                    }
                    return Array(builder.finished)
                }
            }
        }
    }

    /// The bytes of `property`'s field in `record`; nil when it has none.
    private static func field(_ record: RecordReader, _ property: PropertySchema) throws -> [UInt8]? {
        guard property.slot < record.slotCount else { return nil }
        if let width = property.type.fixedWidth {
            return try record.offset(property.slot, size: width).map { Array(UnsafeRawBufferPointer(start: record.base + $0, count: width)) }
        }
        return try record.bytes(slot: property.slot).map { Array($0) }
    }

    // MARK: Encoding

    var bytes: [UInt8] {
        var out: [UInt8] = [1]
        func u32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { out.append(contentsOf: $0) } }
        func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) } }
        func record(_ bytes: [UInt8]) {
            u32(bytes.count)
            out.append(contentsOf: bytes)
        }
        let name = Array(self.name.utf8)
        u32(name.count)
        out.append(contentsOf: name)
        u32(objects.count)
        for object in objects {
            u64(object.entityUid)
            u64(object.id)
            out.append((object.before == nil ? 0 : 1) | (object.after == nil ? 0 : 2))
            if object.before != nil, object.after != nil {
                u32(object.changed.count)
                for id in object.changed { u32(Int(id)) }
            }
            if let before = object.before { record(before) }
            if let after = object.after { record(after) }
            u32(object.links.count)
            for (relation, targets) in object.links.sorted(by: { $0.key < $1.key }) {
                u32(Int(relation))
                for ids in [targets.before, targets.after] {
                    u32(ids.count)
                    for id in ids { u64(id) }
                }
            }
        }
        return out
    }

    init(bytes: [UInt8]) throws {
        var at = 0
        func corrupt() -> CellarError { .fileCorrupt("an undo step of \(bytes.count) bytes is cut short or malformed at byte \(at)") }
        func take(_ count: Int) throws -> ArraySlice<UInt8> {
            guard count >= 0, count <= bytes.count - at else { throw corrupt() }
            defer { at += count }
            return bytes[at..<(at + count)]
        }
        func u32() throws -> Int { Int(try take(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) }
        func u64() throws -> UInt64 { try take(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        guard try take(1).first == 1 else { throw CellarError.fileCorrupt("an undo step of a format this build does not read") }
        name = String(decoding: try take(try u32()), as: UTF8.self)
        let count = try u32()
        var objects: [Object] = []
        for _ in 0..<count {
            var object = Object(entityUid: try u64(), id: try u64(), before: nil, after: nil)
            let which = try take(1).first!
            if which == 3 { object.changed = try (0..<(try u32())).map { _ in UInt32(try u32()) } }
            if which & 1 != 0 { object.before = Array(try take(try u32())) }
            if which & 2 != 0 { object.after = Array(try take(try u32())) }
            for _ in 0..<(try u32()) {
                let relation = UInt32(try u32())
                var sides: [[Id]] = []
                for _ in 0..<2 { sides.append(try (0..<(try u32())).map { _ in try u64() }) }
                object.links[relation] = (sides[0], sides[1])
            }
            objects.append(object)
        }
        guard at == bytes.count else { throw corrupt() }
        self.objects = objects
    }
}
