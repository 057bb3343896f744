import CellarStorage

/// What an undoable write that keeps a step with values (not one that names its commits, see
/// ``CommitStep``) gathers while it runs (``Store/write(actionName:_:)``): for each object
/// replace the change history notes, the object's entry of the step in the stored format of
/// ``UndoStep``, made while the old and the new record are at hand. At the end the step is put
/// together from these entries; only an object the write did more to than replace it once (made,
/// removed, linked, or replaced twice) is looked up in the store, before and after.
///
/// Unchecked exclusivity, as the recorder's: one write transaction (one thread) owns it.
final class UndoCapture {
    /// The step's head, then the entries, back to back.
    @exclusivity(unchecked) private var buffer = CursorBuffer(capacity: 1 << 16)
    /// Per entry, in the order made: the `start` of its event's property IDs in the recorder
    /// (unique among its events that list properties, and ascending), and where its bytes begin.
    @exclusivity(unchecked) private var entries: [(idsStart: UInt32, offset: Int)] = []
    private let builder = RecordBuilder(capacity: 256)
    /// Where `entry` looks first.
    @exclusivity(unchecked) private var hint = 0

    /// Where the entries begin: what comes before them in a step (see `init`).
    private let entriesStart: Int

    /// A capture for the step named `name`: the bytes of a step before its entries (format,
    /// name, a place for the count) come first, so that a step made of these entries only, in
    /// the order kept, is this buffer (`wholeStep`).
    init(name: String) {
        let head = UndoStep.head(name)
        entriesStart = head.count
        head.withUnsafeBytes { buffer.append($0) }
    }

    /// The entries kept, valid until the next `keep`; offsets as `entry` gives them.
    var bytes: UnsafeRawBufferPointer { buffer.bytes }

    /// The whole step when it is made of every entry kept, in the order kept (`objects` of them):
    /// the count is written in place. Valid until the next `keep`.
    func wholeStep(objects: UInt32) -> UnsafeRawBufferPointer? {
        guard objects == entries.count else { return nil }
        _ = CursorBuffer.put(objects, at: buffer.start + entriesStart - 4)
        return bytes
    }

    /// Whether the step is every entry kept, in the order kept: `events` (the recorder's, as made,
    /// not empty) replace distinct objects in ascending order (entity, then id), one event each,
    /// and each has its entry here, in the same order. One pass, no lookups: an update of many
    /// objects in id order, the common case, skips `UndoStep.capture`'s walk.
    func keptEveryOne(of events: [HistoryRecorder.Event]) -> Bool {
        guard !events.isEmpty, events.count == entries.count else { return false }
        return events.withUnsafeBufferPointer { events in
            entries.withUnsafeBufferPointer { entries in
                for index in events.indices {
                    let event = events[index]
                    guard event.kind == .putListed, event.start == entries[index].idsStart else { return false }
                    if index > 0, !events[index - 1].precedes(event) { return false }
                }
                return true
            }
        }
    }

    /// Where the first entry begins.
    var firstEntry: Int { entriesStart }

    /// Copies the `T`-sized bytes of `bytes` as they are.
    @inline(__always)
    private static func copy<T: FixedWidthInteger>(_ bytes: UnsafeRawBufferPointer, as: T.Type, to out: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        out.storeBytes(of: bytes.loadUnaligned(as: T.self), as: T.self)
        return out + MemoryLayout<T>.size
    }

    /// Keeps the entry of object `id` of `schema` replaced from `old` to `new`, the properties
    /// in the slots of `mask` changed (bit `ID − 1`; the event's property IDs start at `idsStart`
    /// in the recorder): a compact entry.
    func keep(_ schema: EntitySchema, id: Id, slots mask: UInt64, idsStart: Int,
              old: RecordReader, new: RecordReader) throws {
        entries.append((UInt32(idsStart), buffer.count))
        // The kind and three varints: room for all of them at once.
        var out = buffer.room(1 + 3 * Varint.maxBytes)
        out = CursorBuffer.put(UndoStep.Kind.compact.rawValue, at: out)
        out = Varint.put(UInt64(schema.id.id), at: out)
        out = Varint.put(id, at: out)
        out = Varint.put(mask, at: out)
        var slots = mask
        while slots != 0 {
            let slot = slots.trailingZeroBitCount
            slots &= slots - 1
            let width = slot < schema.slotWidths.count ? schema.slotWidths[slot] : 0
            guard width != 0 else {
                buffer.end(at: out)
                throw CellarError.schema("property \(slot + 1) of \(schema.name) changed, but the model has no such property")
            }
            let before = try field(slot, of: old, width: width), after = try field(slot, of: new, width: width)
            // The flags byte, then each side after its length's varint: room for all at once.
            out = buffer.room(1 + 2 * Varint.maxBytes + (before?.count ?? 0) + (after?.count ?? 0), at: out)
            // Which sides are there (bits 0 and 1) and a fixed field's width (bits 2 to 5).
            out = CursorBuffer.put(UInt8((before == nil ? 0 : 1) | (after == nil ? 0 : 2) | (width > 0 ? width << 2 : 0)), at: out)
            if let before { out = Self.side(before, width: width, at: out) }
            if let after { out = Self.side(after, width: width, at: out) }
        }
        buffer.end(at: out)
    }

    /// Keeps the entry of object `id` of `schema` replaced from `old` to `new`, the properties
    /// `changed` (ascending IDs, one of them beyond the slot mask) as records of those fields
    /// (kind 3).
    func keepFields(_ schema: EntitySchema, id: Id, changed: UnsafeBufferPointer<UInt32>, idsStart: Int,
                    old: RecordReader, new: RecordReader) throws {
        entries.append((UInt32(idsStart), buffer.count))
        var entry: [UInt8] = []
        UndoStep.append(try UndoStep.replaced(schema, id: id, changed: changed, old: old, new: new, builder: builder), to: &entry)
        entry.withUnsafeBytes { buffer.append($0) }
    }

    /// Puts one side of a field: its bytes, after their length (a varint) when not of fixed width;
    /// the room reserved. A field of 8 or 4 bytes (a date, a number) is one load and store.
    @inline(__always)
    private static func side(_ bytes: UnsafeRawBufferPointer, width: Int, at out: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        switch width {
        case 8: return copy(bytes, as: UInt64.self, to: out)
        case 4: return copy(bytes, as: UInt32.self, to: out)
        default:
            let out = width < 0 ? Varint.put(UInt64(bytes.count), at: out) : out
            if bytes.count > 0 { out.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
            return out + bytes.count
        }
    }

    /// `record`'s field in `slot`, of `width` bytes (a string or byte vector when negative); nil
    /// when absent.
    @inline(__always)
    private func field(_ slot: Int, of record: RecordReader, width: Int) throws -> UnsafeRawBufferPointer? {
        if width > 0 {
            return try record.offset(slot, size: width).map { UnsafeRawBufferPointer(start: record.base + $0, count: width) }
        }
        return try record.field(slot: slot)
    }

    /// The bytes of the entry kept for the event whose property IDs start at `idsStart`; nil when
    /// none was.
    func entry(idsStart: UInt32) -> Range<Int>? {
        // Asked in the order made, mostly: the one after the last found first.
        if hint < entries.count, entries[hint].idsStart == idsStart { return range(hint) }
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].idsStart < idsStart { low = middle + 1 } else { high = middle }
        }
        guard low < entries.count, entries[low].idsStart == idsStart else { return nil }
        return range(low)
    }

    private func range(_ index: Int) -> Range<Int> {
        hint = index + 1
        return entries[index].offset..<(index + 1 < entries.count ? entries[index + 1].offset : buffer.count)
    }
}
