import CellarStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What an undoable write keeps while it runs (``Store/write(actionName:_:)``): for each object
/// replace the change history notes, the object's entry of the step in the stored format of
/// ``UndoStep``, made while the old and the new record are at hand. At the end the step is put
/// together from these entries; only an object the write did more to than replace it once (made,
/// removed, linked, or replaced twice) is looked up in the store, before and after.
///
/// Unchecked exclusivity, as the recorder's: one write transaction (one thread) owns it.
final class UndoCapture {
    /// The entries, back to back: `count` bytes at `buffer`, which holds `capacity`.
    @exclusivity(unchecked) private var buffer: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var count = 0
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
        capacity = 1 << 16
        buffer = malloc(capacity)!
        let head = UndoStep.head(name)
        entriesStart = head.count
        head.withUnsafeBytes { put($0) }
    }

    deinit { free(buffer) }

    /// The entries kept, valid until the next `keep`; offsets as `entry` gives them.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: buffer, count: count) }

    /// The whole step when it is made of every entry kept, in the order kept (`objects` of them):
    /// the count is written in place. Valid until the next `keep`.
    func wholeStep(objects: UInt32) -> UnsafeRawBufferPointer? {
        guard objects == entries.count else { return nil }
        (buffer + entriesStart - 4).storeBytes(of: objects.littleEndian, as: UInt32.self)
        return bytes
    }

    /// Where the first entry begins.
    var firstEntry: Int { entriesStart }

    /// Room for `more` bytes past `count`.
    @inline(__always)
    private func reserve(_ more: Int) {
        guard count + more > capacity else { return }
        var grown = capacity * 2
        while grown < count + more { grown *= 2 }
        // `realloc` moves a large block by remapping its pages, without copying them.
        buffer = realloc(buffer, grown)!
        capacity = grown
    }

    @inline(__always)
    private func put<T: FixedWidthInteger>(_ value: T) {
        reserve(MemoryLayout<T>.size)
        (buffer + count).storeBytes(of: value.littleEndian, as: T.self)
        count += MemoryLayout<T>.size
    }

    /// Puts `value` as an unsigned LEB128 varint (7 bits a byte, low first).
    @inline(__always)
    private func putVarint(_ value: UInt64) {
        reserve(10)
        var value = value
        while value >= 0x80 {
            (buffer + count).storeBytes(of: UInt8(truncatingIfNeeded: value) | 0x80, as: UInt8.self)
            count += 1
            value >>= 7
        }
        (buffer + count).storeBytes(of: UInt8(value), as: UInt8.self)
        count += 1
    }

    @inline(__always)
    private func put(_ raw: UnsafeRawBufferPointer) {
        reserve(raw.count)
        if raw.count > 0 { (buffer + count).copyMemory(from: raw.baseAddress!, byteCount: raw.count) }
        count += raw.count
    }

    /// Keeps the entry of object `id` of `schema` replaced from `old` to `new`, the properties
    /// in the slots of `mask` changed (bit `ID − 1`; the event's property IDs start at `idsStart`
    /// in the recorder): a compact entry.
    func keep(_ schema: EntitySchema, id: Id, slots mask: UInt64, idsStart: Int,
              old: RecordReader, new: RecordReader) throws {
        entries.append((UInt32(idsStart), count))
        put(UndoStep.Kind.compact.rawValue)
        putVarint(UInt64(schema.id.id))
        putVarint(id)
        putVarint(mask)
        var slots = mask
        while slots != 0 {
            let slot = slots.trailingZeroBitCount
            slots &= slots - 1
            let width = slot < schema.slotWidths.count ? schema.slotWidths[slot] : 0
            guard width != 0 else {
                throw CellarError.schema("property \(slot + 1) of \(schema.name) changed, but the model has no such property")
            }
            let before = try field(slot, of: old, width: width), after = try field(slot, of: new, width: width)
            // Which sides are there (bits 0 and 1) and a fixed field's width (bits 2 to 5).
            put(UInt8((before == nil ? 0 : 1) | (after == nil ? 0 : 2) | (width > 0 ? width << 2 : 0)))
            if let before { side(before, width: width) }
            if let after { side(after, width: width) }
        }
    }

    /// Keeps the entry of object `id` of `schema` replaced from `old` to `new`, the properties
    /// `changed` (ascending IDs, one of them beyond the slot mask) as records of those fields
    /// (kind 3).
    func keepFields(_ schema: EntitySchema, id: Id, changed: UnsafeBufferPointer<UInt32>, idsStart: Int,
                    old: RecordReader, new: RecordReader) throws {
        entries.append((UInt32(idsStart), count))
        var entry: [UInt8] = []
        UndoStep.append(try UndoStep.replaced(schema, id: id, changed: changed, old: old, new: new, builder: builder), to: &entry)
        entry.withUnsafeBytes { put($0) }
    }

    /// Puts one side of a field: its bytes, after their length (a varint) when not of fixed width.
    @inline(__always)
    private func side(_ bytes: UnsafeRawBufferPointer, width: Int) {
        if width < 0 { putVarint(UInt64(bytes.count)) }
        put(bytes)
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
        return entries[index].offset..<(index + 1 < entries.count ? entries[index + 1].offset : count)
    }
}
