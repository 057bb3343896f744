/// The CRUD workload's object bytes for the LMDB engine: one FlatBuffers table of 200 bytes per `Note`,
/// laid out as the anchors' C harness builds it, and a generic table reader (a vtable lookup per
/// field), so that the LMDB figures measured beside Cellar do the anchors' work.
///
/// Layout (offsets in the buffer; every integer little-endian):
///
/// | bytes | what |
/// |---|---|
/// | 0..<4 | root uoffset → the table (20) |
/// | 4..<20 | vtable: u16 size 16, u16 table size 44, six u16 field offsets (slots 0...5) |
/// | 20..<24 | the table's soffset to its vtable (20 − 4 = 16) |
/// | 24..<56 | id, creationDate, modificationDate, author (u64/i64, 8-byte aligned) |
/// | 56..<64 | uoffsets of title and text |
/// | 64..<92 | title: u32 length 20, the bytes, NUL, padding to 4 |
/// | 92..<200 | text: u32 length 100, the bytes, NUL, padding to 4 |
///
/// Slots (ObjectBox property id − 1): 0 id, 1 title, 2 text, 3 creationDate, 4 modificationDate,
/// 5 author. Strings of other lengths than the CRUD workload's make other sizes; the builder handles any.
enum FlatNote {
    /// The vtable's field offsets (from the table's start) in slot order.
    static let fieldOffsets: [UInt16] = [4, 36, 40, 12, 20, 28]
    static let table = 20
    static let vtable = 4

    /// Bytes `build` writes for strings of these lengths.
    static func size(titleBytes: Int, textBytes: Int) -> Int {
        64 + padded4(4 + titleBytes + 1) + padded4(4 + textBytes + 1)
    }

    static func padded4(_ n: Int) -> Int { (n + 3) & ~3 }

    /// Builds the table into `buffer` (at least `size(...)` bytes); returns its length.
    static func build(into buffer: UnsafeMutableRawPointer, id: UInt64, title: String, text: String,
                      creationDate: Int64, modificationDate: Int64, author: UInt64) -> Int {
        func u16(_ v: UInt16, _ at: Int) { buffer.storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt16.self) }
        func u32(_ v: UInt32, _ at: Int) { buffer.storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt32.self) }
        func u64(_ v: UInt64, _ at: Int) { buffer.storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt64.self) }
        /// A string at `at`: length, bytes, NUL, zero padding; returns where the next one starts.
        func string(_ s: String, _ at: Int) -> Int {
            let write = { (utf8: UnsafeBufferPointer<UInt8>) -> Int in
                u32(UInt32(utf8.count), at)
                if let base = utf8.baseAddress { (buffer + at + 4).copyMemory(from: base, byteCount: utf8.count) }
                let end = at + 4 + utf8.count
                let next = padded4(end + 1)
                (buffer + end).initializeMemory(as: UInt8.self, repeating: 0, count: next - end)
                return next
            }
            return s.utf8.withContiguousStorageIfAvailable(write) ?? Array(s.utf8).withUnsafeBufferPointer(write)
        }
        u32(UInt32(table), 0)
        u16(16, vtable)
        u16(44, vtable + 2)
        for (slot, offset) in fieldOffsets.enumerated() { u16(offset, vtable + 4 + 2 * slot) }
        buffer.storeBytes(of: Int32(table - vtable).littleEndian, toByteOffset: table, as: Int32.self)
        u64(id, 24)
        u64(UInt64(bitPattern: creationDate), 32)
        u64(UInt64(bitPattern: modificationDate), 40)
        u64(author, 48)
        let titleAt = 64
        let textAt = string(title, titleAt)
        u32(UInt32(titleAt - 56), 56)
        u32(UInt32(textAt - 60), 60)
        return string(text, textAt)
    }

    /// A generic reader over stored bytes (unaligned: LMDB places values on 2-byte boundaries).
    struct Reader {
        let base: UnsafeRawPointer
        let count: Int

        private func u16(_ at: Int) -> Int { Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt16.self))) }
        private func u32(_ at: Int) -> Int { Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt32.self))) }

        /// The table's start, and where a slot's field sits in the buffer (nil: absent or not a table).
        private func field(_ slot: Int) -> Int? {
            guard count >= 4 else { return nil }
            let table = u32(0)
            guard table + 4 <= count else { return nil }
            let vtable = table - Int(Int32(littleEndian: base.loadUnaligned(fromByteOffset: table, as: Int32.self)))
            guard vtable >= 0, vtable + 4 <= count else { return nil }
            let vtableSize = u16(vtable)
            let entry = 4 + 2 * slot
            guard entry + 2 <= vtableSize, vtable + entry + 2 <= count else { return nil }
            let offset = u16(vtable + entry)
            return offset == 0 ? nil : table + offset
        }

        func u64(slot: Int) -> UInt64? {
            guard let at = field(slot), at + 8 <= count else { return nil }
            return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        }

        /// A string field's UTF-8 length.
        func stringLength(slot: Int) -> Int? {
            guard let at = field(slot), at + 4 <= count else { return nil }
            let string = at + u32(at)
            guard string + 4 <= count else { return nil }
            let length = u32(string)
            return string + 4 + length <= count ? length : nil
        }
    }
}
