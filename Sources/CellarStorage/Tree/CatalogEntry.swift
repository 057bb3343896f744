/// What the catalog tree maps each tree's name (its UTF-8 bytes) to: the tree's root, its count of
/// entries and its live bytes, stored as 24 bytes.
struct CatalogEntry {
    static let size = 24

    var root: UInt64
    var count: Int
    var bytes: Int64

    /// Calls `body` with the encoding of this entry, on the stack.
    func withEncoded<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var encoded: (UInt64, UInt64, UInt64) = (root.littleEndian, UInt64(count).littleEndian,
                                                 UInt64(bitPattern: bytes).littleEndian)
        return try withUnsafeBytes(of: &encoded) { try body($0) }
    }

    static func decode(_ value: UnsafeRawBufferPointer, name: String, at offset: UInt64) throws -> CatalogEntry {
        guard value.count == size else {
            throw StorageError.fileCorrupt(offset: offset, reason: "catalog entry for \"\(name)\" has \(value.count) bytes, expected \(size)")
        }
        let count = value.loadLE(UInt64.self, at: 8)
        guard count <= UInt64(Int.max) else {
            throw StorageError.fileCorrupt(offset: offset, reason: "catalog entry for \"\(name)\" has an impossible count")
        }
        return CatalogEntry(root: value.loadLE(UInt64.self, at: 0), count: Int(count),
                            bytes: Int64(bitPattern: value.loadLE(UInt64.self, at: 16)))
    }
}
