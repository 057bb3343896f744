import CellarStorage

/// What an undoable write keeps while it runs (``Store/write(actionName:_:)``): for each object
/// replace the change history notes, the object's entry of the step in the stored format of
/// ``UndoStep``, made while the old and the new record are at hand. At the end the step is put
/// together from these entries; only an object the write did more to than replace it once (made,
/// removed, linked, or replaced twice) is looked up in the store, before and after.
///
/// Unchecked exclusivity, as the recorder's: one write transaction (one thread) owns it.
final class UndoCapture {
    /// The entries, back to back.
    @exclusivity(unchecked) private(set) var bytes: [UInt8] = []
    /// Per entry, in the order made: the `start` of its event's property IDs in the recorder
    /// (unique among its events that list properties, and ascending), and where its bytes begin.
    @exclusivity(unchecked) private var entries: [(idsStart: UInt32, offset: Int)] = []
    private let builder = RecordBuilder(capacity: 256)
    /// Where `entry` looks first.
    private var hint = 0

    init() {}

    /// Keeps the entry of object `id` of `schema` replaced from `old` to `new`, the properties
    /// `changed` (ascending IDs, the event's, whose IDs start at `idsStart` in the recorder).
    func keep(_ schema: EntitySchema, id: Id, changed: UnsafeBufferPointer<UInt32>, idsStart: Int,
              old: RecordReader, new: RecordReader) throws {
        entries.append((UInt32(idsStart), bytes.count))
        guard let last = changed.last, last <= 64 else {
            // A property beyond the slot mask: as records of those fields (kind 3).
            UndoStep.appendHeader(uid: schema.id.uid, id: id, which: 3, to: &bytes)
            UndoStep.append(UInt32(changed.count), to: &bytes)
            for property in changed { UndoStep.append(property, to: &bytes) }
            try UndoStep.appendFields(changed, of: old, schema: schema, builder: builder, to: &bytes)
            try UndoStep.appendFields(changed, of: new, schema: schema, builder: builder, to: &bytes)
            UndoStep.append(UInt32(0), to: &bytes)  // no relation
            return
        }
        UndoStep.appendHeader(uid: schema.id.uid, id: id, which: 4, to: &bytes)
        var mask: UInt64 = 0
        for property in changed where property >= 1 { mask |= 1 << UInt64(property - 1) }
        withUnsafeBytes(of: mask.littleEndian) { bytes.append(contentsOf: $0) }
        var slots = mask
        while slots != 0 {
            let slot = slots.trailingZeroBitCount
            slots &= slots - 1
            guard slot < schema.slotTypes.count, let type = schema.slotTypes[slot] else {
                throw CellarError.schema("property \(slot + 1) of \(schema.name) changed, but the model has no such property")
            }
            try UndoStep.appendField(slot, of: old, type: type, to: &bytes)
            try UndoStep.appendField(slot, of: new, type: type, to: &bytes)
        }
        UndoStep.append(UInt32(0), to: &bytes)  // no relation
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
        return entries[index].offset..<(index + 1 < entries.count ? entries[index + 1].offset : bytes.count)
    }
}
