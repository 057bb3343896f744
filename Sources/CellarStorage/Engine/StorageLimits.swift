/// Limits on what the engine stores.
public enum StorageLimits {
    /// The largest key, in bytes.
    public static let maxKeySize = 1 << 20
    /// The largest value, in bytes.
    public static let maxValueSize = (1 << 30) - 64
    /// The longest tree name, in UTF-8 bytes.
    public static let maxTreeNameSize = 1024

    /// Throws `tooLarge` for a key or value over its limit.
    @inline(__always)
    static func check(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        guard key.count <= maxKeySize else {
            throw StorageError.tooLarge(what: "key", size: key.count, limit: maxKeySize)
        }
        guard value.count <= maxValueSize else {
            throw StorageError.tooLarge(what: "value", size: value.count, limit: maxValueSize)
        }
    }
}
