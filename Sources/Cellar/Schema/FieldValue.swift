import CellarStorage

/// A property's value as read from a record.
enum FieldValue: Equatable {
    case integer(UInt64)
    case floating(Double)
    /// A string's or byte vector's bytes, or a UUID's 16.
    case bytes(UnsafeRawBufferPointer)

    static func == (a: FieldValue, b: FieldValue) -> Bool {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x == y
        case (.floating(let x), .floating(let y)): return x == y
        case (.bytes(let x), .bytes(let y)): return x.elementsEqual(y)
        default: return false
        }
    }
}
