extension RecordReader {
    /// This record without the fields of retired properties: the slots `types` has no type for
    /// (`types[slot]` is the type of the property with ID `slot + 1` in the current model; see
    /// `ModelEntity.typesBySlot`), built in `builder`. Nil when the record has no such field, so
    /// that it is kept as it is. Compaction writes the result in the record's place; the slot
    /// count stays, a dropped slot reads as absent.
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
            if let type = types[slot] { try builder.copyField(slot, of: type, from: self) }
        }
        return Array(builder.bytes)
    }
}

extension RecordReader {
    /// The bytes of the field in `slot` read as `type`; nil when the record has none there. A
    /// fixed-width value's own bytes (numbers, dates, UUIDs, GeoPoints, decimals), or a
    /// variable-width one's content (strings, byte vectors, collections, nested records).
    func fieldBytes(_ slot: Int, of type: PropertyType) throws -> UnsafeRawBufferPointer? {
        guard let width = type.fixedWidth else { return try bytes(slot: slot) }
        return try offset(slot, size: width).map { UnsafeRawBufferPointer(start: base + $0, count: width) }
    }
}

extension RecordBuilder {
    /// Adds `record`'s field in `slot`, read as `type`, unless the record has none there.
    func copyField(_ slot: Int, of type: PropertyType, from record: RecordReader) throws {
        guard let bytes = try record.fieldBytes(slot, of: type) else { return }
        if type.fixedWidth != nil { add(fixed: bytes, slot: slot) } else { add(bytes: bytes, slot: slot) }
    }
}

extension ModelEntity {
    /// The type of the property stored in each slot (slot = property ID − 1), for every slot up
    /// to `lastPropertyId`; nil where no property of this model has it (retired, or never used).
    var typesBySlot: [PropertyType?] {
        var types = [PropertyType?](repeating: nil, count: Int(lastPropertyId.id))
        for property in properties where property.id.id >= 1 && Int(property.id.id) <= types.count {
            types[Int(property.id.id) - 1] = property.type
        }
        return types
    }
}
