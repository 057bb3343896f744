/// Growing a raw byte buffer by doubling, for the buffers that hot paths reuse (a record being
/// built, a write transaction's held-back puts).
package enum GrowableBytes {
    /// A new buffer of at least `needed` bytes (the capacity doubled until it fits) holding the
    /// first `used` bytes of `buffer`, which is deallocated. Returns the buffer and its capacity.
    package static func grow(_ buffer: UnsafeMutableRawPointer, used: Int, capacity: Int,
                             needed: Int) -> (buffer: UnsafeMutableRawPointer, capacity: Int) {
        var newCapacity = max(capacity, 1) * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBuffer = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        newBuffer.copyMemory(from: buffer, byteCount: used)
        buffer.deallocate()
        return (newBuffer, newCapacity)
    }
}
