/// The catalog tree maps each tree's name (its UTF-8 bytes) to this 24-byte value.
enum CatalogEntry {
    static let size = 24

    /// Calls `body` with the encoding of `entry`, on the stack.
    static func withEncoded<R>(_ entry: CatalogCache.Entry, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var bytes: (UInt64, UInt64, UInt64) = (entry.root.littleEndian, UInt64(entry.count).littleEndian,
                                               UInt64(bitPattern: entry.bytes).littleEndian)
        return try withUnsafeBytes(of: &bytes) { try body($0) }
    }

    static func decode(_ value: UnsafeRawBufferPointer, name: String, at offset: UInt64) throws -> (root: UInt64, count: Int, bytes: Int64) {
        guard value.count == size else {
            throw StorageError.fileCorrupt(offset: offset, reason: "catalog entry for \"\(name)\" has \(value.count) bytes, expected \(size)")
        }
        let count = value.loadLE(UInt64.self, at: 8)
        guard count <= UInt64(Int.max) else {
            throw StorageError.fileCorrupt(offset: offset, reason: "catalog entry for \"\(name)\" has an impossible count")
        }
        return (value.loadLE(UInt64.self, at: 0), Int(count), Int64(bitPattern: value.loadLE(UInt64.self, at: 16)))
    }
}
