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
/// (the tie-break when two devices give the same timestamp). Its text, 16 hexadecimal digits of
/// the timestamp, `-`, and the device's UUID in lower case, sorts as the clocks compare.
@_spi(Sync)
public struct ReplicaClock: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let timestamp: HybridTimestamp
    public let device: UUID

    public init(timestamp: HybridTimestamp, device: UUID) {
        self.timestamp = timestamp
        self.device = device
    }

    /// The clock of `text` (as ``description`` writes it); nil when it is not one.
    public init?(text: some StringProtocol) {
        var text = String(text)
        guard let clock = text.withUTF8({ Self.parse($0) }) else { return nil }
        self = clock
    }

    /// The clock of 53 bytes of UTF-8 text: 16 hexadecimal digits, `-`, a UUID; nil when they
    /// are not one.
    public static func parse(_ utf8: UnsafeBufferPointer<UInt8>) -> ReplicaClock? {
        guard utf8.count == 53, utf8[16] == UInt8(ascii: "-") else { return nil }
        var raw: UInt64 = 0
        for index in 0..<16 {
            guard let digit = UUIDText.nibble(utf8[index]) else { return nil }
            raw = raw << 4 | UInt64(digit)
        }
        guard let device = UUIDText.uuid(UnsafeBufferPointer(rebasing: utf8[17...])) else { return nil }
        return ReplicaClock(timestamp: HybridTimestamp(rawValue: raw), device: device)
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

    /// The timestamps, then the devices' UUIDs byte by byte: the order of their lower-case texts
    /// (fixed-length hexadecimal, dashes in the same places), without making them.
    public static func < (a: ReplicaClock, b: ReplicaClock) -> Bool {
        if a.timestamp != b.timestamp { return a.timestamp < b.timestamp }
        return withUnsafeBytes(of: a.device.uuid) { x in
            withUnsafeBytes(of: b.device.uuid) { y in memcmp(x.baseAddress!, y.baseAddress!, 16) < 0 }
        }
    }
}
