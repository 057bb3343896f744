import Foundation

/// A property's default value in the code's model (`ModelProperty.defaultValue`): what queries
/// read for it in a record written before the property was added to the model, the value the
/// generated binding's `read` gives the object. Of the property's type: `bool` for Bool,
/// `integer` or `unsigned` for integer types (in their range), `floatingPoint` for Float (a value
/// a Float holds) and Double, `string`, `date` for Date (stored in milliseconds, or nanoseconds
/// with `date-nano`), `bytes` for byte vectors, `uuid`, `decimal`.
public enum PropertyDefault: Hashable, Sendable {
    /// The default of a `Bool` property.
    case bool(Bool)
    /// The default of a signed integer property.
    case integer(Int64)
    /// The default of an unsigned integer property.
    case unsigned(UInt64)
    /// The default of a `Float` or `Double` property.
    case floatingPoint(Double)
    /// The default of a `String` property.
    case string(String)
    /// The default of a `Date` property.
    case date(Date)
    /// The default of a `Data` or `[UInt8]` property.
    case bytes([UInt8])
    /// The default of a `UUID` property.
    case uuid(UUID)
    /// The default of a `Decimal` property.
    case decimal(Decimal)
}

/// A default value in its stored form, as `RecordReader.value(of:id:)` gives a stored one: queries
/// read it for a record without the property's field. Its bytes are allocated once and kept for
/// the life of the property's schema.
final class StoredDefault: @unchecked Sendable {
    // Unchecked: immutable after init; `storage` is owned, read-only, and freed in deinit.
    let field: FieldValue
    private let storage: UnsafeMutableRawBufferPointer?

    /// Nil when the default does not suit the property (`Model.validate` refuses those).
    init?(_ value: PropertyDefault, for property: ModelProperty) {
        guard let stored = try? StoredDefault.stored(value, for: property) else { return nil }
        switch stored {
        case .integer(let bits):
            field = .integer(bits)
            storage = nil
        case .floating(let double):
            field = .floating(double)
            storage = nil
        case .bytes(let bytes):
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
            buffer.copyBytes(from: bytes)
            storage = buffer
            field = .bytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<bytes.count]))
        }
    }

    deinit { storage?.deallocate() }

    enum Stored {
        case integer(UInt64)
        case floating(Double)
        case bytes([UInt8])
    }

    /// The stored form of `value` for `property`: integers as their 64-bit pattern, sign-extended
    /// when signed (as `value(of:id:)` reads them), Bools as 0 and 1, dates in the unit they are
    /// stored in, Floats as the Double of the Float. Throws `CellarError.schema` naming what does
    /// not fit.
    static func stored(_ value: PropertyDefault, for property: ModelProperty) throws -> Stored {
        let what = "the default value \(value) of property \(property.name) (\(property.type))"
        let mismatch = CellarError.schema("\(what) is not of the property's type")
        guard !property.flags.contains(.id), property.type != .relation else {
            throw CellarError.schema("\(what): the id and relations have no default value")
        }
        let unsigned = property.flags.contains(.unsigned)
        switch (property.type, value) {
        case (.bool, .bool(let flag)):
            return .integer(flag ? 1 : 0)
        case (.byte, .integer(let v)), (.short, .integer(let v)), (.int, .integer(let v)), (.long, .integer(let v)),
             (.char, .integer(let v)):
            return try integer(UInt64(bitPattern: v), negative: v < 0, property: property, unsigned: unsigned, what: what)
        case (.byte, .unsigned(let v)), (.short, .unsigned(let v)), (.int, .unsigned(let v)), (.long, .unsigned(let v)),
             (.char, .unsigned(let v)):
            return try integer(v, negative: false, property: property, unsigned: unsigned, what: what)
        case (.float, .floatingPoint(let v)):
            guard Double(Float(v)) == v || v.isNaN else { throw CellarError.schema("\(what) is not a value a Float holds") }
            return .floating(v)
        case (.double, .floatingPoint(let v)):
            return .floating(v)
        case (.string, .string(let text)):
            return .bytes(Array(text.utf8))
        case (.date, .date(let date)), (.dateNano, .date(let date)):
            do {
                let units = property.type == .date ? try DateStorage.milliseconds(date) : try DateStorage.nanoseconds(date)
                return .integer(UInt64(bitPattern: units))
            } catch {
                throw CellarError.schema("\(what) cannot be stored: \(error)")
            }
        case (.byteVector, .bytes(let bytes)):
            return .bytes(bytes)
        case (.uuid, .uuid(let uuid)):
            return .bytes(UUIDEncoding.bytes(uuid))
        case (.decimal, .decimal(let decimal)):
            return .bytes(DecimalEncoding.bytes(decimal))
        default:
            throw mismatch
        }
    }

    /// An integer in the range of the property's width and signedness, as `value(of:id:)` widens it.
    private static func integer(_ bits: UInt64, negative: Bool, property: ModelProperty, unsigned: Bool,
                                what: String) throws -> Stored {
        let width = 8 * (property.type.fixedWidth ?? 8)
        let fits: Bool
        if unsigned {
            fits = !negative && (width == 64 || bits >> width == 0)
        } else {
            let v = Int64(bitPattern: bits)
            fits = width == 64 ? (negative || v >= 0) : (v >= -(1 << (width - 1)) && v < 1 << (width - 1))
        }
        guard fits else { throw CellarError.schema("\(what) is out of the property's range") }
        return .integer(bits)
    }
}

extension RecordReader {
    /// The value queries see for `property` in this record: the stored one, else the property's
    /// default value (`ModelProperty.defaultValue`), else nil.
    func queryValue(of property: PropertySchema, id: Id) throws -> FieldValue? {
        if let value = try value(of: property, id: id) { return value }
        return property.defaultValue?.field
    }
}
