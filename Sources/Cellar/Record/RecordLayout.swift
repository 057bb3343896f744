/// The layout of an object record (all integers little-endian):
///
/// ```
/// offset 0   u16  slot count N (= the entity's last property ID when written)
/// offset 2   u16  format (1)
/// offset 4   N × u32  field offsets from the record's start; 0 = the field is absent
/// then       the fields, in the order they were written:
///              scalars at their natural width (Bool 1 byte, 0 or 1; integers; Float and
///              Double as their bit patterns; dates as Int64 milliseconds or nanoseconds);
///              strings and byte vectors as a u32 length, then the bytes (UTF-8 for strings)
/// ```
///
/// A property's slot is its property ID − 1, so a property added to the model later is simply
/// absent from older records (read as its default, or nil when optional) and the bytes of a
/// removed one are never looked at. See `docs/object-layer.md` for why the layout is this one.
@usableFromInline
enum RecordLayout {
    @usableFromInline static let headerSize = 4
    @usableFromInline static let format: UInt16 = 1
    /// The largest slot count a record can hold (property IDs are at most this).
    static let maxSlots = Int(UInt16.max)
}
