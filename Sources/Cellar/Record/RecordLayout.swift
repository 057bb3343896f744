/// The layout of an object record (all integers little-endian):
///
/// ```
/// offset 0   u16  slot count N (= the entity's last property ID when written)
/// offset 2   u16  format: 2 (narrow) or 1 (wide)
/// offset 4   N × u16 (narrow) or N × u32 (wide)  field offsets from the record's start;
///            0 = the field is absent. A record is narrow when it is shorter than 64 KiB.
/// then       the fields, in the order they were written:
///              scalars at their natural width (Bool 1 byte, 0 or 1; integers; Float and
///              Double as their bit patterns; dates as Int64 milliseconds or nanoseconds;
///              UUIDs as their 16 bytes in RFC 4122 order; GeoPoints as two Float64;
///              decimals as the 23 bytes of `DecimalEncoding`);
///              strings and byte vectors as a u32 length, then the bytes (UTF-8 for strings);
///              Flex values as a u32 length, then their `FlexEncoding`
/// ```
///
/// A property's slot is its property ID − 1, so a property added to the model later is simply
/// absent from older records (read as its default, or nil when optional) and the bytes of a
/// removed one are never looked at. See `docs/object-layer.md` for why the layout is this one.
@usableFromInline
enum RecordLayout {
    @usableFromInline static let headerSize = 4
    /// u32 offsets: records of 64 KiB and more (and every record written before format 2).
    @usableFromInline static let wideFormat: UInt16 = 1
    /// u16 offsets: records shorter than 64 KiB; 2 bytes a slot less.
    @usableFromInline static let narrowFormat: UInt16 = 2
    /// The largest offset a narrow record's slot table holds.
    @usableFromInline static let narrowLimit = Int(UInt16.max)
    /// The largest slot count a record can hold (property IDs are at most this).
    static let maxSlots = Int(UInt16.max)
}
