import CellarStorage
import Foundation

/// One undoable write: for each object it changed, the properties it changed and their fields
/// before and after it (the whole record where the object was not there before, or after: created
/// or removed by the write), and for each standalone relation whose links of the object changed,
/// the targets before and after. Fields are kept as stored, so that keeping a step copies bytes
/// and formats nothing. Kept in the store (see ``UndoLog``) as:
///
/// ```
/// u8 format (3), name (u32 length, UTF-8), u32 object count, then per object a u8 kind:
///   1, 2 or 3 (which records follow, 1: before, 2: after): u64 entity UID, u64 id; with both,
///     u32 count and u32 IDs of the properties changed (each record then holds only their
///     fields); each record as u32 length and bytes; then u32 relation count, per relation:
///     u32 relation ID, u32 count and u64 ids before, u32 count and u64 ids after;
///   5 (replaced, every property changed below ID 65; no relation): varint entity ID, varint id,
///     varint mask of the slots changed (slot = property ID − 1), then per slot, ascending, a u8
///     (bit 0: there before, bit 1: there after, bits 2–5: the field's width when fixed) and
///     each side that is there as stored (a number's little-endian bytes; a string's or byte
///     vector's UTF-8 or bytes after a varint length).
/// ```
/// (little-endian; varints LEB128). Formats 1 and 2 put the entity UID and id before the kind;
/// format 2 also has kind 4, as kind 5 with a u64 mask, each side as u32 length (0xFFFFFFFF:
/// absent) and bytes, and a u32 relation count of 0. Both still read. A step of format 4 names
/// its commits instead of holding values (``CommitStep``): this one is made from those.
struct UndoStep {
    /// The format steps are written in.
    static let format: UInt8 = 3

    /// The kinds of entry that hold a replace as its fields (see above); kinds 1 to 3 are the
    /// bits of which records follow.
    enum Kind: UInt8 {
        /// Format 2 only.
        case replacedFields = 4
        case compact = 5
    }

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

    /// Calls `use` with the step of the write running in `context`, as stored, named `name`: what
    /// the write has changed so far, compared with the state it began from (its base snapshot);
    /// not when it changed nothing. The objects come in entity ID and id order. An object
    /// replaced once takes the entry ``UndoCapture`` made at the time (and when every object is
    /// such, in the order made, the step is the capture's buffer as it is); any other is looked
    /// up before and after.
    static func capture(_ name: String, in context: TransactionContext, _ use: (UnsafeRawBufferPointer) throws -> Void) throws {
        let store = context.store
        guard let history = context.history, let write = context.write else {
            throw CellarError.illegalArgument("an undoable write needs the store's change history (StoreOptions.changeHistory)")
        }
        if let capture = history.undo, capture.keptEveryOne(of: history.events),
           let whole = capture.wholeStep(objects: UInt32(history.events.count)) {
            // Every object replaced once, in id order: what the walk below would find.
            return try use(whole)
        }
        history.sortEvents()
        var out = head(name)
        let headCount = out.count
        var count: UInt32 = 0
        var base: TransactionContext?
        let builder = RecordBuilder(capacity: 1024)
        let events = history.events
        let capture = history.undo
        // Entries made at the time, copied a run of consecutive ones at once.
        var kept = 0..<0
        func copyKept() {
            if let capture, !kept.isEmpty { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: capture.bytes[kept])) }
            kept = 0..<0
        }
        var position = 0
        while position < events.count {
            let first = events[position]
            var end = position + 1
            while end < events.count, events[end].entity == first.entity, events[end].id == first.id { end += 1 }
            defer { position = end }
            if end == position + 1, first.kind == .putListed, let capture, let entry = capture.entry(idsStart: first.start) {
                if entry.lowerBound != kept.upperBound { copyKept() }
                kept = (kept.isEmpty ? entry.lowerBound : kept.lowerBound)..<entry.upperBound
                count += 1
                continue
            }
            copyKept()
            guard let schema = store.schemasById[first.entity] else { continue }
            var relations = Set<UInt32>()
            for event in events[position..<end] where event.kind == .relations { relations.formUnion(history.listed(event)) }
            if base == nil { base = TransactionContext(store: store, read: try write.readBase()) }
            if let object = try Self.object(schema, id: first.id, relations: relations, before: base!, after: context, builder: builder) {
                append(object, to: &out)
                count += 1
            }
        }
        guard count > 0 else { return }
        if out.count == headCount, let capture, kept == capture.firstEntry..<capture.bytes.count,
           let whole = capture.wholeStep(objects: count) {
            // Every object replaced once, in the order made (an update of many objects).
            return try use(whole)
        }
        copyKept()
        setCount(count, headCount: headCount, in: &out)
        try out.withUnsafeBytes(use)
    }

    /// An object by its entity's ID and its id.
    struct ObjectKey: Hashable, Comparable {
        let entity: UInt32
        let id: Id

        static func < (a: ObjectKey, b: ObjectKey) -> Bool { (a.entity, a.id) < (b.entity, b.id) }
    }

    /// Calls `use` with the step named `name` holding what changed of `objects` (with the
    /// relations whose links of each may have changed) between `base` and the write running in
    /// `context`; not when nothing did. What ``Store/undoGroup(actionName:_:)`` keeps.
    static func capture(_ name: String, objects: [ObjectKey: Set<UInt32>], from base: TransactionContext,
                        in context: TransactionContext, _ use: (UnsafeRawBufferPointer) throws -> Void) throws {
        var out = head(name)
        let headCount = out.count
        var count: UInt32 = 0
        let builder = RecordBuilder(capacity: 1024)
        for (key, relations) in objects.sorted(by: { $0.key < $1.key }) {
            guard let schema = context.store.schemasById[key.entity] else { continue }
            if let object = try Self.object(schema, id: key.id, relations: relations, before: base, after: context, builder: builder) {
                append(object, to: &out)
                count += 1
            }
        }
        guard count > 0 else { return }
        setCount(count, headCount: headCount, in: &out)
        try out.withUnsafeBytes(use)
    }

    /// What the write changed of object `id` of `schema`, looked up in `before` (the write's base)
    /// and `after` (the write); nil when nothing.
    private static func object(_ schema: EntitySchema, id: Id, relations: Set<UInt32>, before base: TransactionContext,
                               after context: TransactionContext, builder: RecordBuilder) throws -> Object? {
        var object = Object(entityUid: schema.id.uid, id: id)
        try base.withRecord(schema, id) { before in
            try context.withRecord(schema, id) { after in
                guard let before, let after else {
                    object.before = before.map { Array($0) }
                    object.after = after.map { Array($0) }
                    return
                }
                let old = try RecordReader(before), new = try RecordReader(after)
                var changed: [UInt32] = []
                try HistoryRecorder.changedProperties(of: schema, old: old, new: new, into: &changed)
                guard !changed.isEmpty else { return }
                object = try changed.withUnsafeBufferPointer {
                    try replaced(schema, id: id, changed: $0, old: old, new: new, builder: builder)
                }
            }
        }
        for relation in relations.sorted() {
            let tree = StorageLayout.relationTree(relation)
            let before = try base.pairedIds(id, in: tree), after = try context.pairedIds(id, in: tree)
            if Set(before) != Set(after) { object.links[relation] = (before, after) }
        }
        let valuesChanged = switch (object.before, object.after) {
        case (nil, nil): false          // made and removed by the step
        case (.some, .some): !object.changed.isEmpty
        default: true
        }
        return valuesChanged || !object.links.isEmpty ? object : nil
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

    /// The step as stored.
    var bytes: [UInt8] {
        var out = Self.head(name)
        Self.setCount(UInt32(objects.count), headCount: out.count, in: &out)
        for object in objects { Self.append(object, to: &out) }
        return out
    }

    /// The bytes of a step named `name` before its entries: the format, the name, and the count
    /// of objects (the last 4 bytes), 0 for the caller to set.
    static func head(_ name: String) -> [UInt8] {
        var out: [UInt8] = [format]
        let nameBytes = Array(name.utf8)
        append(UInt32(nameBytes.count), to: &out)
        out.append(contentsOf: nameBytes)
        append(UInt32(0), to: &out)
        return out
    }

    /// Reads the head of `step` as stored: its format, its name, and where its count of objects
    /// begins. Throws `fileCorrupt` for a format this build does not read or a name cut short.
    static func head(of step: UnsafeRawBufferPointer) throws -> (format: UInt8, name: String, end: Int) {
        guard let format = step.first else { throw CellarError.fileCorrupt("an undo step of no bytes") }
        guard (1...CommitStep.format).contains(format) else { throw CellarError.fileCorrupt("an undo step of a format this build does not read (\(format))") }
        guard step.count >= 5, case let length = Int(step.loadLE(UInt32.self, at: 1)), length <= step.count - 5 else {
            throw CellarError.fileCorrupt("an undo step of \(step.count) bytes is cut short in its name")
        }
        return (format, String(decoding: UnsafeRawBufferPointer(rebasing: step[5..<(5 + length)]), as: UTF8.self), 5 + length)
    }

    /// Sets the count of objects in `step`, whose head (`head`) is its first `headCount` bytes.
    static func setCount(_ count: UInt32, headCount: Int, in step: inout [UInt8]) {
        withUnsafeBytes(of: count.littleEndian) { step.replaceSubrange((headCount - 4)..<headCount, with: $0) }
    }

    /// Appends `object`'s entry.
    static func append(_ object: Object, to out: inout [UInt8]) {
        appendHeader(uid: object.entityUid, id: object.id, which: (object.before == nil ? 0 : 1) | (object.after == nil ? 0 : 2), to: &out)
        if object.before != nil, object.after != nil {
            append(UInt32(object.changed.count), to: &out)
            for id in object.changed { append(id, to: &out) }
        }
        for record in [object.before, object.after] {
            guard let record else { continue }
            append(UInt32(record.count), to: &out)
            out.append(contentsOf: record)
        }
        append(UInt32(object.links.count), to: &out)
        for (relation, targets) in object.links.sorted(by: { $0.key < $1.key }) {
            append(relation, to: &out)
            for ids in [targets.before, targets.after] {
                append(UInt32(ids.count), to: &out)
                for id in ids { withUnsafeBytes(of: id.littleEndian) { out.append(contentsOf: $0) } }
            }
        }
    }

    /// Appends the start of an object's entry: its entity's UID, its id and which records follow.
    @inline(__always)
    static func appendHeader(uid: UInt64, id: Id, which: UInt8, to out: inout [UInt8]) {
        out.append(which)
        withUnsafeBytes(of: (uid.littleEndian, id.littleEndian)) { out.append(contentsOf: $0) }
    }

    @inline(__always)
    static func append(_ value: UInt32, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    /// Object `id` of `schema` replaced from `old` to `new`, the properties `changed` (ascending
    /// IDs): each side as a record holding only those fields, in the bytes they are stored in.
    static func replaced(_ schema: EntitySchema, id: Id, changed: UnsafeBufferPointer<UInt32>, old: RecordReader,
                         new: RecordReader, builder: RecordBuilder) throws -> Object {
        func fields(of record: RecordReader) throws -> [UInt8] {
            builder.begin(slotCount: record.slotCount)
            for id in changed {
                let slot = Int(id) - 1
                guard slot >= 0, slot < record.slotCount, slot < schema.slotTypes.count, let type = schema.slotTypes[slot] else { continue }
                try builder.copyField(slot, of: type, from: record)
            }
            return Array(builder.finished)
        }
        return Object(entityUid: schema.id.uid, id: id, before: try fields(of: old), after: try fields(of: new), changed: Array(changed))
    }

    /// Reads a step as stored; `schemas` (by entity UID) tell the types of the fields an entry
    /// of kind 4 holds.
    init(bytes: [UInt8], schemas: [UInt64: EntitySchema], schemasById: [UInt32: EntitySchema]) throws {
        var at = 0
        func corrupt() -> CellarError { .fileCorrupt("an undo step of \(bytes.count) bytes is cut short or malformed at byte \(at)") }
        func take(_ count: Int) throws -> ArraySlice<UInt8> {
            guard count >= 0, count <= bytes.count - at else { throw corrupt() }
            defer { at += count }
            return bytes[at..<(at + count)]
        }
        func u32() throws -> Int { Int(try take(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) }
        func u64() throws -> UInt64 { try take(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        func varint() throws -> UInt64 {
            var value: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 7) {
                let byte = try take(1).first!
                value |= UInt64(byte & 0x7F) << UInt64(shift)
                if byte < 0x80 { return value }
            }
            throw corrupt()
        }
        let format: UInt8
        (format, name, at) = try bytes.withUnsafeBytes { try Self.head(of: $0) }
        guard format <= Self.format else {
            throw CellarError.fileCorrupt("the undo step \"\(name)\" names its commits: its values are made from them first")
        }
        let count = try u32()
        var objects: [Object] = []
        let builder = RecordBuilder(capacity: 256)
        for _ in 0..<count {
            var object = Object(entityUid: 0, id: 0, before: nil, after: nil)
            var which: UInt8
            if format >= 3 {
                which = try take(1).first!
                if which == Kind.compact.rawValue {
                    let entity = try varint()
                    guard let schema = schemasById[UInt32(truncatingIfNeeded: entity)] else {
                        throw CellarError.fileCorrupt("an undo step holds an object of entity \(entity), which the store's model does not have")
                    }
                    object.entityUid = schema.id.uid
                    object.id = try varint()
                } else {
                    object.entityUid = try u64()
                    object.id = try u64()
                }
            } else {
                object.entityUid = try u64()
                object.id = try u64()
                which = try take(1).first!
            }
            switch which {
            case 0...3:
                if which == 3 { object.changed = try (0..<(try u32())).map { _ in UInt32(try u32()) } }
                if which & 1 != 0 { object.before = Array(try take(try u32())) }
                if which & 2 != 0 { object.after = Array(try take(try u32())) }
            case Kind.replacedFields.rawValue where format == 2, Kind.compact.rawValue where format >= 3:
                let compact = which == Kind.compact.rawValue
                var slots = compact ? try varint() : try u64()
                let schema = schemas[object.entityUid]
                var fields: [(slot: Int, before: ArraySlice<UInt8>?, after: ArraySlice<UInt8>?)] = []
                while slots != 0 {
                    let slot = slots.trailingZeroBitCount
                    slots &= slots - 1
                    guard let schema, slot < schema.slotTypes.count, let type = schema.slotTypes[slot] else {
                        throw CellarError.fileCorrupt("an undo step holds property \(slot + 1) of entity UID \(object.entityUid), which the store's model does not have")
                    }
                    var sides: [ArraySlice<UInt8>?] = []
                    if compact {
                        let flags = try take(1).first!
                        let width = type.fixedWidth
                        guard Int(flags >> 2) == (width ?? 0) else {
                            throw CellarError.fileCorrupt("an undo step holds property \(slot + 1) of \(schema.name) with another width than its type has now")
                        }
                        for side in 0..<2 {
                            guard flags & (1 << side) != 0 else { sides.append(nil); continue }
                            sides.append(try take(width ?? Int(try varint())))
                        }
                    } else {
                        for _ in 0..<2 {
                            let length = try u32()
                            sides.append(length == 0xFFFF_FFFF ? nil : try take(length))
                        }
                    }
                    fields.append((slot, sides[0], sides[1]))
                    object.changed.append(UInt32(slot + 1))
                }
                // Each side as a record holding those fields, as kind 3 keeps them.
                for after in [false, true] {
                    let slotCount = (fields.last?.slot ?? -1) + 1
                    builder.begin(slotCount: slotCount)
                    for field in fields {
                        guard let bytes = after ? field.after : field.before, let type = schema?.slotTypes[field.slot] else { continue }
                        try bytes.withUnsafeBytes { raw in
                            if let width = type.fixedWidth {
                                guard raw.count == width else { throw corrupt() }
                                builder.add(fixed: raw, slot: field.slot)
                            } else {
                                builder.add(bytes: raw, slot: field.slot)
                            }
                        }
                    }
                    if after { object.after = Array(builder.finished) } else { object.before = Array(builder.finished) }
                }
                if compact {
                    objects.append(object)
                    continue
                }
            default:
                throw corrupt()
            }
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
