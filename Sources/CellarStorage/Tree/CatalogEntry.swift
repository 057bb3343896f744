/// The catalog tree maps each tree's name (its UTF-8 bytes) to this 24-byte value.
enum CatalogEntry {
    static let size = 24

    static func encode(root: UInt64, count: Int, bytes: Int64) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        out.withUnsafeMutableBytes { b in
            b.baseAddress!.storeLE(root, at: 0)
            b.baseAddress!.storeLE(UInt64(count), at: 8)
            b.baseAddress!.storeLE(UInt64(bitPattern: bytes), at: 16)
        }
        return out
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
