import CellarStorage
import Foundation

/// Where a store stands with its replica (a sync server), under `sync` in the meta tree, written
/// in the same transactions as what it describes. 33 bytes, little-endian:
///
/// ```
/// u8   format version: 1
/// u8×16 the store's device id (a UUID: the tie-break between equal timestamps)
/// u64  the last history sequence the replica acknowledged (0: none)
/// u64  the last replica sequence applied here (0: none)
/// ```
@_spi(Sync)
public struct ReplicaState: Sendable, Equatable {
    static let key: [UInt8] = Array("sync".utf8)
    static let version: UInt8 = 1
    static let size = 33

    /// This store's id among the stores that sync: made once, at the first sync.
    public var device: UUID
    /// The history's entries up to this sequence are on the replica.
    public var acknowledged: UInt64
    /// The replica's changes up to this sequence of its own are applied to the store.
    public var pulled: UInt64

    static func read(in write: WriteTransaction) throws -> ReplicaState? {
        guard let meta = try write.tree(StorageLayout.metaTree, create: false), let bytes = try write.get(meta, key: key) else { return nil }
        guard bytes.count == size, bytes[0] == version else {
            throw CellarError.fileCorrupt("the sync state has \(bytes.count) bytes and format \(bytes.first.map(String.init) ?? "none"); this build reads \(size) bytes of format \(version)")
        }
        return bytes.withUnsafeBytes { raw in
            ReplicaState(device: UUID(uuid: raw.loadUnaligned(fromByteOffset: 1, as: uuid_t.self)),
                         acknowledged: raw.loadLE(UInt64.self, at: 17),
                         pulled: raw.loadLE(UInt64.self, at: 25))
        }
    }

    func write(in write: WriteTransaction) throws {
        var bytes: [UInt8] = [Self.version]
        bytes += GlobalIds.bytes(device)
        withUnsafeBytes(of: acknowledged.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: pulled.littleEndian) { bytes.append(contentsOf: $0) }
        try write.put(try write.tree(StorageLayout.metaTree, create: true)!, key: Self.key, value: bytes)
    }
}

/// A last-writer-wins clock: a change's hybrid timestamp, then the id of the device that made it
/// (the tie-break when two devices give the same timestamp). Its ``text``, what a sync server
/// stores and compares, sorts byte by byte as the clocks compare; its ``description`` is for
/// people: 16 hexadecimal digits of the timestamp, `-`, the device's UUID in lower case.
@_spi(Sync)
public struct ReplicaClock: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let timestamp: HybridTimestamp
    public let device: UUID

    public init(timestamp: HybridTimestamp, device: UUID) {
        self.timestamp = timestamp
        self.device = device
    }

    /// The clock of `text` (as ``text`` writes it); nil when it is not one.
    public init?(text: some StringProtocol) {
        var text = String(text)
        guard let clock = text.withUTF8({ Self.parse($0) }) else { return nil }
        self = clock
    }

    /// The 64 digits of ``text``, in ASCII order: each digit's value is its index.
    private static let digits: [UInt8] = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)

    /// The value of one digit of ``text``; nil for a byte that is not one.
    private static func value(_ digit: UInt8) -> UInt32? {
        switch digit {
        case UInt8(ascii: "-"): 0
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(digit - UInt8(ascii: "0")) + 1
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(digit - UInt8(ascii: "A")) + 11
        case UInt8(ascii: "_"): 37
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(digit - UInt8(ascii: "a")) + 38
        default: nil
        }
    }

    /// The clock as 32 bytes of ASCII: the timestamp's 8 bytes and the device's 16 (big-endian,
    /// as UUIDs are), 6 bits a digit, from an alphabet in ASCII order (`-`, `0`–`9`, `A`–`Z`,
    /// `_`, `a`–`z`): texts of equal length sort byte by byte as their bits do, so as the clocks
    /// compare. (It is base64 of those 24 bytes with an alphabet put in order.)
    public var text: String {
        let raw = timestamp.rawValue
        return withUnsafeBytes(of: device.uuid) { uuid in
            String(unsafeUninitializedCapacity: 32) { out in
                func byte(_ index: Int) -> UInt32 {
                    index < 8 ? UInt32(truncatingIfNeeded: raw >> (56 - 8 * UInt64(index))) & 0xff : UInt32(uuid[index - 8])
                }
                for group in 0..<8 {
                    let bits = byte(3 * group) << 16 | byte(3 * group + 1) << 8 | byte(3 * group + 2)
                    for digit in 0..<4 { out[4 * group + digit] = Self.digits[Int(bits >> (18 - 6 * UInt32(digit)) & 63)] }
                }
                return 32
            }
        }
    }

    /// The clock of 32 bytes of UTF-8 text as ``text`` writes them; nil when they are not one.
    public static func parse(_ utf8: UnsafeBufferPointer<UInt8>) -> ReplicaClock? {
        guard utf8.count == 32 else { return nil }
        var raw: UInt64 = 0
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let valid = withUnsafeMutableBytes(of: &uuid) { out -> Bool in
            for group in 0..<8 {
                var bits: UInt32 = 0
                for digit in 0..<4 {
                    guard let value = value(utf8[4 * group + digit]) else { return false }
                    bits = bits << 6 | value
                }
                for part in 0..<3 {
                    let index = 3 * group + part, byte = UInt8(truncatingIfNeeded: bits >> (16 - 8 * UInt32(part)))
                    if index < 8 { raw = raw << 8 | UInt64(byte) } else { out[index - 8] = byte }
                }
            }
            return true
        }
        return valid ? ReplicaClock(timestamp: HybridTimestamp(rawValue: raw), device: UUID(uuid: uuid)) : nil
    }

    public var description: String {
        String(unsafeUninitializedCapacity: 53) { out in
            let digits = UUIDText.digits
            var raw = timestamp.rawValue
            for index in stride(from: 15, through: 0, by: -1) {
                out[index] = digits[Int(raw & 15)]
                raw >>= 4
            }
            out[16] = UInt8(ascii: "-")
            UUIDText.write(device, into: out.baseAddress! + 17)
            return 53
        }
    }

    /// The timestamps, then the devices' UUIDs byte by byte: the order of their ``text``s
    /// (and of their descriptions), without making them.
    public static func < (a: ReplicaClock, b: ReplicaClock) -> Bool {
        if a.timestamp != b.timestamp { return a.timestamp < b.timestamp }
        return withUnsafeBytes(of: a.device.uuid) { x in
            withUnsafeBytes(of: b.device.uuid) { y in memcmp(x.baseAddress!, y.baseAddress!, 16) < 0 }
        }
    }
}
