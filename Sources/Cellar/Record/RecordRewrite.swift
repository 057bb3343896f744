extension RecordReader {
    /// This record without the fields of retired properties: the slots `types` has no type for
    /// (`types[slot]` is the type of the property with ID `slot + 1` in the current model). Nil
    /// when the record has no such field, so that it is kept as it is. Compaction writes the
    /// result in the record's place; the slot count stays, a dropped slot reads as absent.
    func withoutRetiredFields(_ types: [PropertyType?]) throws -> [UInt8]? {
        var hasRetired = false
        for slot in 0..<slotCount where slot >= types.count || types[slot] == nil {
            if try offset(slot, size: 0) != nil {
                hasRetired = true
                break
            }
        }
        guard hasRetired else { return nil }
        // The live fields, where they are and how long (a scalar's width, or a length and bytes).
        var fields: [(slot: Int, at: Int, size: Int)] = []
        for slot in 0..<min(slotCount, types.count) {
            guard let type = types[slot] else { continue }
            if let width = type.fixedWidth {
                if let at = try offset(slot, size: width) { fields.append((slot, at, width)) }
            } else if let bytes = try bytes(slot: slot) {
                fields.append((slot, bytes.baseAddress! - base - 4, 4 + bytes.count))
            }
        }
        let tableEnd = RecordLayout.headerSize + 4 * slotCount
        var record = [UInt8](repeating: 0, count: tableEnd + fields.reduce(0) { $0 + $1.size })
        record.withUnsafeMutableBytes { out in
            out.storeBytes(of: UInt16(slotCount).littleEndian, as: UInt16.self)
            out.storeBytes(of: RecordLayout.format.littleEndian, toByteOffset: 2, as: UInt16.self)
            var position = tableEnd
            for field in fields {
                out.storeBytes(of: UInt32(position).littleEndian, toByteOffset: RecordLayout.headerSize + 4 * field.slot, as: UInt32.self)
                (out.baseAddress! + position).copyMemory(from: base + field.at, byteCount: field.size)
                position += field.size
            }
        }
        return record
    }
}
