import Foundation
import CellarStorage

/// Writes one object record (see `RecordLayout`) into a buffer it reuses, so that a put allocates
/// nothing per field. Generated bindings call `add` once per stored property; absent optionals
/// are not added.
///
/// ```swift
/// builder.add(note.title, slot: 1)        // property ID 2
/// builder.add(note.text, slot: 2)         // String?: left out when nil
/// ```
///
/// Its members are SPI, for bindings only: generated files (and bindings written by hand) import
/// `@_spi(CellarGenerated) import Cellar`; app code, with a plain `import Cellar`, does not see them.
public final class RecordBuilder {
    /// The mutable fields, behind a pointer: a class's stored `var`s cost a runtime exclusivity
    /// check on every access, and a put touches these several times per field.
    @usableFromInline
    struct State {
        @usableFromInline var buffer: UnsafeMutableRawPointer
        @usableFromInline var capacity: Int
        @usableFromInline var length = 0
        @usableFromInline var slotCount = 0
        /// The slot table holds u32 offsets: the record grew past `RecordLayout.narrowLimit`.
        @usableFromInline var wide = false

        @usableFromInline
        init(buffer: UnsafeMutableRawPointer, capacity: Int) {
            self.buffer = buffer
            self.capacity = capacity
        }
    }

    @usableFromInline let state: UnsafeMutablePointer<State>
    /// How deep this builder's records nest: 0 for an entity's, 1 for the embedded objects in it…
    var depth = 0
    /// The builder of records nested in this one's (embedded objects), once one was written.
    var nested: RecordBuilder?

    /// A builder whose buffer starts with `capacity` bytes (at least 64) and grows as needed.
    @_spi(CellarGenerated) public init(capacity: Int = 1024) {
        let capacity = max(capacity, 64)
        state = .allocate(capacity: 1)
        state.initialize(to: State(buffer: .allocate(byteCount: capacity, alignment: 8), capacity: capacity))
    }

    deinit {
        state.pointee.buffer.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Starts a record with room for `slotCount` fields (the entity's last property ID). It starts
    /// narrow (u16 offsets) and turns wide when it grows past 64 KiB.
    @_spi(CellarGenerated) public func begin(slotCount: Int) { start(slotCount: slotCount) }

    /// `begin(slotCount:)` for the library's own inlinable code (which cannot call SPI).
    @usableFromInline @inline(__always)
    func start(slotCount: Int) {
        precondition(slotCount >= 0 && slotCount <= RecordLayout.maxSlots, "slot count \(slotCount) out of range")
        let length = RecordLayout.headerSize + 2 * slotCount
        reserve(length)
        state.pointee.slotCount = slotCount
        state.pointee.length = length
        state.pointee.wide = false
        let buffer = state.pointee.buffer
        buffer.storeBytes(of: UInt16(slotCount).littleEndian, toByteOffset: 0, as: UInt16.self)
        buffer.storeBytes(of: RecordLayout.narrowFormat.littleEndian, toByteOffset: 2, as: UInt16.self)
        (buffer + RecordLayout.headerSize).initializeMemory(as: UInt8.self, repeating: 0, count: 2 * slotCount)
    }

    /// The finished record; valid until the next `begin`.
    @_spi(CellarGenerated) public var bytes: UnsafeRawBufferPointer { finished }

    /// `bytes` for the library's own inlinable code (which cannot use SPI).
    @usableFromInline
    var finished: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: state.pointee.buffer, count: state.pointee.length) }

    // MARK: Scalars

    /// Adds an integer of any width at its natural size.
    @inlinable
    @_spi(CellarGenerated) public func add<T: FixedWidthInteger>(_ value: T, slot: Int) {
        let at = field(slot, size: MemoryLayout<T>.size)
        state.pointee.buffer.storeBytes(of: value.littleEndian, toByteOffset: at, as: T.self)
    }

    /// Adds an integer when there is one; nil leaves the field absent.
    @inlinable
    @_spi(CellarGenerated) public func add<T: FixedWidthInteger>(_ value: T?, slot: Int) {
        if let value { add(value, slot: slot) }
    }

    /// Adds a Bool as one byte, 0 or 1.
    @inlinable
    @_spi(CellarGenerated) public func add(_ value: Bool, slot: Int) { add(UInt8(value ? 1 : 0), slot: slot) }

    /// Adds a Bool when there is one; nil leaves the field absent.
    @inlinable
    @_spi(CellarGenerated) public func add(_ value: Bool?, slot: Int) {
        if let value { add(value, slot: slot) }
    }

    /// Adds a Float as its 32-bit pattern.
    @inlinable
    @_spi(CellarGenerated) public func add(_ value: Float, slot: Int) { add(value.bitPattern, slot: slot) }

    /// Adds a Float when there is one; nil leaves the field absent.
    @inlinable
    @_spi(CellarGenerated) public func add(_ value: Float?, slot: Int) {
        if let value { add(value.bitPattern, slot: slot) }
    }

    /// Adds a Double as its 64-bit pattern.
    @inlinable
    @_spi(CellarGenerated) public func add(_ value: Double, slot: Int) { add(value.bitPattern, slot: slot) }

    /// Adds a Double when there is one; nil leaves the field absent.
    @inlinable
    @_spi(CellarGenerated) public func add(_ value: Double?, slot: Int) {
        if let value { add(value.bitPattern, slot: slot) }
    }

    /// Adds a date as milliseconds since 1970 (rounded to the nearest millisecond).
    /// Throws `illegalArgument` for a date outside ±292 million years.
    @inlinable
    @_spi(CellarGenerated) public func add(_ value: Date, slot: Int) throws {
        add(try DateStorage.milliseconds(value), slot: slot)
    }

    /// Adds a date in milliseconds when there is one; nil leaves the field absent.
    @inlinable
    @_spi(CellarGenerated) public func add(_ value: Date?, slot: Int) throws {
        if let value { try add(value, slot: slot) }
    }

    /// Adds a date as nanoseconds since 1970 (`// cellar: date-nano`); about ±292 years.
    @inlinable
    @_spi(CellarGenerated) public func addNanoseconds(_ value: Date, slot: Int) throws {
        add(try DateStorage.nanoseconds(value), slot: slot)
    }

    /// Adds a date in nanoseconds when there is one; nil leaves the field absent.
    @inlinable
    @_spi(CellarGenerated) public func addNanoseconds(_ value: Date?, slot: Int) throws {
        if let value { try addNanoseconds(value, slot: slot) }
    }

    /// Adds a UUID as its 16 bytes, in RFC 4122 order (as `uuid_t` holds them).
    @inlinable
    @_spi(CellarGenerated) public func add(_ value: UUID, slot: Int) {
        let at = field(slot, size: 16)
        withUnsafeBytes(of: value.uuid) { (state.pointee.buffer + at).copyMemory(from: $0.baseAddress!, byteCount: 16) }
    }

    /// Adds a UUID when there is one; nil leaves the field absent.
    @inlinable
    @_spi(CellarGenerated) public func add(_ value: UUID?, slot: Int) {
        if let value { add(value, slot: slot) }
    }

    /// Adds a decimal as its `DecimalEncoding.width` bytes, which compare in the numbers' order.
    @_spi(CellarGenerated) public func add(_ value: Decimal, slot: Int) {
        let at = field(slot, size: DecimalEncoding.width)
        DecimalEncoding.write(value, to: UnsafeMutableRawBufferPointer(start: state.pointee.buffer + at, count: DecimalEncoding.width))
    }

    /// Adds a decimal when there is one; nil leaves the field absent.
    @_spi(CellarGenerated) public func add(_ value: Decimal?, slot: Int) {
        if let value { add(value, slot: slot) }
    }

    /// Adds a fixed-width field's stored bytes as they are (`raw.count` bytes inline).
    func add(fixed raw: UnsafeRawBufferPointer, slot: Int) {
        let at = field(slot, size: raw.count)
        (state.pointee.buffer + at).copyMemory(from: raw.baseAddress!, byteCount: raw.count)
    }

    // MARK: Strings and bytes

    /// Adds a string as its UTF-8 bytes.
    @_spi(CellarGenerated) public func add(_ value: String, slot: Int) {
        let count = value.utf8.count
        let at = variableField(slot, count: count)
        let buffer = state.pointee.buffer
        let copied: Bool? = value.utf8.withContiguousStorageIfAvailable { source in
            if count > 0 { (buffer + at).copyMemory(from: source.baseAddress!, byteCount: count) }
            return true
        }
        if copied == nil { Self.copyBytes(of: value, to: buffer + at) }
    }

    /// A string without contiguous UTF-8 (a bridged one), byte by byte. Kept out of `add`: its
    /// loop made the compiler retain every string `add` copies.
    @inline(never)
    private static func copyBytes(of value: String, to target: UnsafeMutableRawPointer) {
        var i = 0
        for byte in value.utf8 { target.storeBytes(of: byte, toByteOffset: i, as: UInt8.self); i += 1 }
    }

    /// Adds a string when there is one; nil leaves the field absent.
    @_spi(CellarGenerated) public func add(_ value: String?, slot: Int) {
        if let value { add(value, slot: slot) }
    }

    /// Adds a byte vector.
    @_spi(CellarGenerated) public func add(bytes value: UnsafeRawBufferPointer, slot: Int) {
        let at = variableField(slot, count: value.count)
        if value.count > 0 { (state.pointee.buffer + at).copyMemory(from: value.baseAddress!, byteCount: value.count) }
    }

    /// Adds `Data` as a byte vector.
    @_spi(CellarGenerated) public func add(_ value: Data, slot: Int) {
        value.withUnsafeBytes { add(bytes: $0, slot: slot) }
    }

    /// Adds `Data` when there is one; nil leaves the field absent.
    @_spi(CellarGenerated) public func add(_ value: Data?, slot: Int) {
        if let value { add(value, slot: slot) }
    }

    /// Adds bytes as a byte vector.
    @_spi(CellarGenerated) public func add(_ value: [UInt8], slot: Int) {
        value.withUnsafeBytes { add(bytes: $0, slot: slot) }
    }

    /// Adds bytes when there are some; nil leaves the field absent.
    @_spi(CellarGenerated) public func add(_ value: [UInt8]?, slot: Int) {
        if let value { add(value, slot: slot) }
    }

    // MARK: Space

    /// Appends `size` bytes for `slot`'s field, points the slot at them and returns their offset.
    @inlinable
    func field(_ slot: Int, size: Int) -> Int {
        let state = self.state
        let slotCount = state.pointee.slotCount
        precondition(slot >= 0 && slot < slotCount, "slot \(slot) is outside the record's \(slotCount) slots")
        let at = state.pointee.length
        let end = at + size
        let wide = state.pointee.wide
        // One test for the common case: the field fits the buffer and the narrow offsets.
        guard end <= state.pointee.capacity && (wide || end <= RecordLayout.narrowLimit) else {
            return fieldAfterGrowing(slot, size: size)
        }
        state.pointee.length = end
        let buffer = state.pointee.buffer
        if wide {
            buffer.storeBytes(of: UInt32(truncatingIfNeeded: at).littleEndian, toByteOffset: RecordLayout.headerSize + 4 * slot, as: UInt32.self)
        } else {
            buffer.storeBytes(of: UInt16(truncatingIfNeeded: at).littleEndian, toByteOffset: RecordLayout.headerSize + 2 * slot, as: UInt16.self)
        }
        return at
    }

    /// `field` when the record must turn wide or the buffer grow first.
    @usableFromInline
    func fieldAfterGrowing(_ slot: Int, size: Int) -> Int {
        if !state.pointee.wide && state.pointee.length + size > RecordLayout.narrowLimit { widen() }
        reserve(state.pointee.length + size)
        return field(slot, size: size)
    }

    /// Turns the record wide: the fields move up by 2 bytes a slot, the table holds u32 offsets.
    @usableFromInline
    func widen() {
        let slotCount = state.pointee.slotCount
        let shift = 2 * slotCount
        let narrowEnd = RecordLayout.headerSize + shift
        let length = state.pointee.length
        reserve(length + shift)
        let buffer = state.pointee.buffer
        let offsets = (0..<slotCount).map {
            Int(buffer.loadLE(UInt16.self, at: RecordLayout.headerSize + 2 * $0))
        }
        memmove(buffer + narrowEnd + shift, buffer + narrowEnd, length - narrowEnd)  // overlapping
        for (slot, offset) in offsets.enumerated() {
            let wide = offset == 0 ? 0 : UInt32(offset + shift)
            buffer.storeBytes(of: wide.littleEndian, toByteOffset: RecordLayout.headerSize + 4 * slot, as: UInt32.self)
        }
        buffer.storeBytes(of: RecordLayout.wideFormat.littleEndian, toByteOffset: 2, as: UInt16.self)
        state.pointee.length = length + shift
        state.pointee.wide = true
    }

    /// Appends a u32 length and room for `count` bytes; returns the offset of the bytes.
    @usableFromInline
    func variableField(_ slot: Int, count: Int) -> Int {
        precondition(count <= Int(UInt32.max) - state.pointee.length, "a field of \(count) bytes is too large")
        let at = field(slot, size: 4 + count)
        state.pointee.buffer.storeBytes(of: UInt32(count).littleEndian, toByteOffset: at, as: UInt32.self)
        return at + 4
    }

    @inlinable
    func reserve(_ needed: Int) {
        if needed > state.pointee.capacity { grow(needed) }
    }

    @usableFromInline
    func grow(_ needed: Int) {
        (state.pointee.buffer, state.pointee.capacity) = GrowableBytes.grow(
            state.pointee.buffer, used: state.pointee.length, capacity: state.pointee.capacity, needed: needed)
    }
}

/// How dates are stored: Int64 milliseconds (or nanoseconds) since 1970. For tests, benchmarks
/// and fuzzers (`@_spi(Testing)`); the library itself calls `DateStorage`.
@_spi(Testing) public enum DateEncoding {
    /// `date` in whole milliseconds since 1970, rounded to the nearest one.
    @inlinable
    public static func milliseconds(_ date: Date) throws -> Int64 { try DateStorage.milliseconds(date) }

    /// `date` in whole nanoseconds since 1970, rounded to the nearest one.
    @inlinable
    public static func nanoseconds(_ date: Date) throws -> Int64 { try DateStorage.nanoseconds(date) }

    /// The date `milliseconds` after 1970.
    @inlinable
    public static func date(milliseconds: Int64) -> Date { DateStorage.date(milliseconds: milliseconds) }

    /// The date `nanoseconds` after 1970.
    @inlinable
    public static func date(nanoseconds: Int64) -> Date { DateStorage.date(nanoseconds: nanoseconds) }
}

/// How dates are stored: Int64 milliseconds (or nanoseconds) since 1970.
@usableFromInline
enum DateStorage {
    /// `date` in whole milliseconds since 1970, rounded to the nearest one.
    @inlinable
    static func milliseconds(_ date: Date) throws -> Int64 {
        try whole(date.timeIntervalSince1970 * 1_000, unit: "milliseconds")
    }

    /// `date` in whole nanoseconds since 1970, rounded to the nearest one.
    @inlinable
    static func nanoseconds(_ date: Date) throws -> Int64 {
        // Whole seconds and the fraction apart, so that the nanoseconds survive the Double.
        let seconds = date.timeIntervalSince1970
        let whole = seconds.rounded(.down)
        let fraction = ((seconds - whole) * 1e9).rounded()
        guard whole.isFinite, abs(whole) < 9.2e9 else {
            throw CellarError.illegalArgument("the date \(date) cannot be stored in nanoseconds since 1970 (about ±292 years)")
        }
        return Int64(whole) * 1_000_000_000 + Int64(fraction)
    }

    @inlinable
    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
    }

    @inlinable
    static func date(nanoseconds: Int64) -> Date {
        let seconds = nanoseconds / 1_000_000_000
        let rest = nanoseconds % 1_000_000_000
        return Date(timeIntervalSince1970: Double(seconds) + Double(rest) / 1e9)
    }

    /// `value` rounded to the nearest whole number, halves away from zero (`value.rounded()`),
    /// worked out from the truncation: `rounded()` is a call into libm on baseline x86-64, and
    /// every date a put stores comes through here.
    @usableFromInline
    static func whole(_ value: Double, unit: String) throws -> Int64 {
        guard value >= -9.2e18, value <= 9.2e18 else {   // NaN fails both
            throw CellarError.illegalArgument("a date of \(value) \(unit) since 1970 cannot be stored")
        }
        let truncated = Int64(value)
        // Exact: a double and its truncation differ by a representable fraction.
        let fraction = value - Double(truncated)
        if fraction >= 0.5 { return truncated + 1 }
        if fraction <= -0.5 { return truncated - 1 }
        return truncated
    }
}
