/// A value longer than the inline limit, held in memory until its transaction commits.
final class PendingValue {
    let bytes: UnsafeRawBufferPointer

    init(copying source: UnsafeRawBufferPointer) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(source.count, 1), alignment: 8)
        if source.count > 0 { storage.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: source.count) }
        bytes = UnsafeRawBufferPointer(start: storage.baseAddress, count: source.count)
    }

    deinit { UnsafeMutableRawPointer(mutating: bytes.baseAddress!).deallocate() }
}

// MARK: - Compression
