extension RecordReader {
    /// This record without the fields of retired properties: the slots `types` has no type for
    /// (`types[slot]` is the type of the property with ID `slot + 1` in the current model), built
    /// in `builder`. Nil when the record has no such field, so that it is kept as it is.
    /// Compaction writes the result in the record's place; the slot count stays, a dropped slot
    /// reads as absent.
    func withoutRetiredFields(_ types: [PropertyType?], into builder: RecordBuilder) throws -> [UInt8]? {
        var hasRetired = false
        for slot in 0..<slotCount where slot >= types.count || types[slot] == nil {
            if try offset(slot, size: 0) != nil {
                hasRetired = true
                break
            }
        }
        guard hasRetired else { return nil }
        builder.begin(slotCount: slotCount)
        for slot in 0..<min(slotCount, types.count) {
            guard let type = types[slot] else { continue }
            if let width = type.fixedWidth {
                guard let at = try offset(slot, size: width) else { continue }
                switch width {
                case 1: builder.add(base.load(fromByteOffset: at, as: UInt8.self), slot: slot)
                case 2: builder.add(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt16.self)), slot: slot)
                case 4: builder.add(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt32.self)), slot: slot)
                default: builder.add(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt64.self)), slot: slot)
                }
            } else if let bytes = try bytes(slot: slot) {
                builder.add(bytes: bytes, slot: slot)
            }
        }
        return Array(builder.bytes)
    }
}
