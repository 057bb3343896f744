import Foundation

/// UUIDs to and from their 36-character text (`8-4-4-4-12` hexadecimal digits), without the
/// allocations and the `sscanf` that `UUID(uuidString:)` and `uuidString.lowercased()` cost
/// on Linux: sync reads and writes a few of them for every object it moves. For sync packages
/// (`@_spi(Sync)`).
@_spi(Sync)
public enum UUIDText {
    /// The UUID of `text` (either case); nil when it is not one.
    public static func uuid(_ text: some StringProtocol) -> UUID? {
        var text = String(text)
        return text.withUTF8 { uuid($0) }
    }

    /// The UUID of 36 bytes of UTF-8 text (either case); nil when they are not one.
    public static func uuid(_ utf8: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard utf8.count == 36 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let valid = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var index = 0
            for byte in 0..<16 {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard utf8[index] == UInt8(ascii: "-") else { return false }
                    index += 1
                }
                guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return false }
                out[byte] = high << 4 | low
                index += 2
            }
            return true
        }
        return valid ? UUID(uuid: bytes) : nil
    }

    /// The text of `uuid` in lower case (what PostgreSQL prints for a `uuid`).
    public static func text(_ uuid: UUID) -> String {
        String(unsafeUninitializedCapacity: 36) { out in
            write(uuid, into: out.baseAddress!)
            return 36
        }
    }

    /// Writes the 36 bytes of `uuid`'s lower-case text at `out`.
    public static func write(_ uuid: UUID, into out: UnsafeMutablePointer<UInt8>) {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            var index = 0
            for byte in 0..<16 {
                if byte == 4 || byte == 6 || byte == 8 || byte == 10 {
                    out[index] = UInt8(ascii: "-")
                    index += 1
                }
                out[index] = digits[Int(bytes[byte] >> 4)]
                out[index + 1] = digits[Int(bytes[byte] & 15)]
                index += 2
            }
        }
    }

    /// The hexadecimal digits, lower case, as UTF-8.
    public static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The value of one hexadecimal digit (either case).
    @inline(__always)
    public static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }
}
