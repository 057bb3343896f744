// Note-like values for the compression fuzzing: the samples FuzzDecompress trains its fixed
// dictionary from at start-up, and MakeCorpus the same dictionary (for the frames it seeds the
// corpus with) and the values of its compressed store. One definition, so that both train the
// same dictionary: zstd's trainer is deterministic, given the same samples and capacity.

/// Values shaped like the benchmarks' `Note` objects (docs/crud-workload.md), without the record
/// layout: what a store's values have in common, for zstd to find.
public enum NoteSamples {
    /// How many samples the fixed dictionary is trained from.
    public static let count = 600
    /// The fixed dictionary's capacity in bytes (the trainer may use less).
    public static let dictionaryCapacity = 8 << 10
    /// The fixed dictionary's id (its bytes 4..<8): the first id a store gives.
    public static let dictionaryId: UInt32 = 1

    /// The start of a lorem ipsum sentence (the benchmarks' `Note.text` uses its first 85 characters).
    public static let lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua."

    /// Sample `i`: an 8-byte id (i + 1), `Note title %09d`, `Body %09d ` and 85 characters of the
    /// lorem ipsum, and two 8-byte dates (milliseconds since 1970), all little-endian: 144 bytes.
    public static func note(_ i: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(144)
        append(UInt64(i + 1), to: &bytes)
        bytes += Array("Note title \(zeroPadded(i, width: 9))".utf8)
        bytes += Array("Body \(zeroPadded(i, width: 9)) \(lorem.prefix(85))".utf8)
        let created = 1_700_000_000_000 + 1000 * Int64(i)
        append(UInt64(bitPattern: created), to: &bytes)
        append(UInt64(bitPattern: created + 60_000 * Int64(i % 7)), to: &bytes)
        return bytes
    }

    /// Samples 0..<`count`.
    public static func notes(_ count: Int = NoteSamples.count) -> [[UInt8]] {
        (0..<count).map(note)
    }

    /// `value` in decimal, with zeros in front up to `width` digits.
    public static func zeroPadded(_ value: Int, width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }
}
