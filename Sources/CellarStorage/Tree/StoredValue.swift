/// A value as the leaf stores it: its bytes (compressed or not), and where it is for errors.
struct StoredValue {
    let bytes: UnsafeRawBufferPointer
    let compressed: Bool
    /// The file offset of the node (inline) or value record (out of line) holding it; for
    /// messages only (0 for a write transaction's own changes).
    let offset: UInt64
}
