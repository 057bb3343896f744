import CZstd

/// A dictionary ready to compress with (zstd's digested form), at one level.
final class CompressionDictionary: @unchecked Sendable {
    let id: UInt32
    let pointer: OpaquePointer

    init?(id: UInt32, bytes: UnsafeRawBufferPointer, level: Int32) {
        guard let pointer = ZSTD_createCDict(bytes.baseAddress, bytes.count, level) else { return nil }
        self.id = id
        self.pointer = pointer
    }

    deinit { ZSTD_freeCDict(pointer) }
}

/// A dictionary ready to decompress with. Immutable; shared by every reader that needs it.
final class DecompressionDictionary: @unchecked Sendable {
    let id: UInt32
    let pointer: OpaquePointer

    init?(id: UInt32, bytes: UnsafeRawBufferPointer) {
        guard let pointer = ZSTD_createDDict(bytes.baseAddress, bytes.count) else { return nil }
        self.id = id
        self.pointer = pointer
    }

    deinit { ZSTD_freeDDict(pointer) }
}
