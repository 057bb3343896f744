import Foundation

@_spi(CellarGenerated) extension RecordBuilder {
    /// Adds a flexible value (`PropertyType.flex`) as a variable-length field: a u32 length,
    /// then the value's `FlexEncoding`. Throws `CellarError.illegalArgument` for a value beyond
    /// `FlexEncoding`'s limits (nesting, elements, size, dates), adding nothing.
    public func add(_ value: FlexValue, slot: Int) throws {
        // Encoded apart first: a container's body length is known only after its elements.
        let encoded = try FlexEncoding.encode(value)
        guard encoded.count <= Int(UInt32.max) - state.pointee.length - 4 else {
            throw CellarError.illegalArgument("a Flex value of \(encoded.count) bytes does not fit in a record")
        }
        encoded.withUnsafeBytes { add(bytes: $0, slot: slot) }
    }

    /// Adds a Flex value when there is one; nil leaves the field absent.
    public func add(_ value: FlexValue?, slot: Int) throws {
        if let value { try add(value, slot: slot) }
    }
}

@_spi(CellarGenerated) extension RecordReader {
    /// The flexible value in `slot`; nil when absent. Throws `CellarError.fileCorrupt` when the
    /// field is not exactly one valid `FlexEncoding` value.
    public func flex(slot: Int) throws -> FlexValue? {
        guard let bytes = try bytes(slot: slot) else { return nil }
        return try FlexEncoding.decode(bytes)
    }
}
