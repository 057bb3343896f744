// libFuzzer target: object records, the bytes Cellar reads from the map for every object.
//
// Input: byte 0 = number of typed slots n (mod 32), the next n bytes pick each slot's type, the
// rest is the record. The record is read with `RecordReader` — its header, then every accessor
// on every slot, then `verify(types:)`. A thrown `CellarError.fileCorrupt` is the expected answer
// to bad bytes; a crash, a trap or an AddressSanitizer report is a bug in Cellar.
//
// When the record verifies, every typed value is written again with `RecordBuilder` and read
// back: the values must be the same (the builder and the reader agree on the layout).
@_spi(CellarGenerated) import Cellar
import Foundation

let collections: [PropertyType] = [.list(of: .string)!, .list(of: .long)!, .set(of: .int)!, .set(of: .string)!, .map(of: .string)!,
                                   .map(of: .double)!, .list(of: .uuid)!, .list(of: .bool)!, .list(of: .byteVector)!, .set(of: .short)!]
let types: [PropertyType] = [.bool, .byte, .short, .int, .long, .float, .double, .string, .date, .byteVector, .dateNano, .relation, .uuid,
                                .decimal] + collections

/// One decoded value, compared by bits (so that NaN equals itself).
enum Value: Equatable {
    case absent
    case integer(UInt64)
    case bytes([UInt8])
}

func readAll(_ reader: RecordReader, _ slotTypes: [PropertyType?]) throws -> [Value] {
    try slotTypes.enumerated().map { slot, type in
        guard let type else { return .absent }
        switch type {
        case .bool: return try reader.bool(slot: slot).map { .integer($0 ? 1 : 0) } ?? .absent
        case .byte: return try reader.read(UInt8.self, slot: slot).map { .integer(UInt64($0)) } ?? .absent
        case .short: return try reader.read(UInt16.self, slot: slot).map { .integer(UInt64($0)) } ?? .absent
        case .int: return try reader.read(UInt32.self, slot: slot).map { .integer(UInt64($0)) } ?? .absent
        case .float: return try reader.float(slot: slot).map { .integer(UInt64($0.bitPattern)) } ?? .absent
        case .double: return try reader.double(slot: slot).map { .integer($0.bitPattern) } ?? .absent
        case .string: return try reader.string(slot: slot).map { .bytes(Array($0.utf8)) } ?? .absent
        case .byteVector: return try reader.byteArray(slot: slot).map { .bytes($0) } ?? .absent
        case .uuid: return try reader.uuid(slot: slot).map { .bytes(UUIDEncoding.bytes($0)) } ?? .absent
        case .decimal: return try reader.decimal(slot: slot).map { .bytes(DecimalEncoding.bytes($0)) } ?? .absent
        case _ where type.collection != nil: return try reader.bytes(slot: slot).map { .bytes(Array($0)) } ?? .absent
        default: return try reader.read(UInt64.self, slot: slot).map { .integer($0) } ?? .absent
        }
    }
}

func write(_ values: [Value], _ slotTypes: [PropertyType?], into builder: RecordBuilder) {
    builder.begin(slotCount: values.count)
    for (slot, value) in values.enumerated() {
        guard let type = slotTypes[slot] else { continue }
        switch value {
        case .absent: continue
        case .integer(let bits):
            switch type {
            case .bool: builder.add(bits == 1, slot: slot)
            case .byte: builder.add(UInt8(bits), slot: slot)
            case .short: builder.add(UInt16(bits), slot: slot)
            case .int, .float: builder.add(UInt32(bits), slot: slot)
            default: builder.add(bits, slot: slot)
            }
        case .bytes(let bytes):
            if type == .string {
                builder.add(String(decoding: bytes, as: UTF8.self), slot: slot)
            } else if type == .uuid {
                bytes.withUnsafeBytes { builder.add(UUIDEncoding.uuid($0), slot: slot) }
            } else if type == .decimal {
                // Read back from a verified record: its bytes decode.
                bytes.withUnsafeBytes { builder.add(try! DecimalEncoding.decimal($0), slot: slot) }
            } else if type.collection != nil {
                bytes.withUnsafeBytes { builder.add(bytes: $0, slot: slot) }   // verified: copied as it is
            } else {
                builder.add(bytes, slot: slot)
            }
        }
    }
}

/// A collection that verified reads as its Swift value, which written again with `RecordBuilder`
/// and read back is the same value (sets and maps compared as values: their stored order is the
/// writer's).
func checkCollection(_ reader: RecordReader, slot: Int, _ type: PropertyType) throws {
    func same<V: Equatable>(_ read: (RecordReader, Int) throws -> V?, _ write: (RecordBuilder, V) throws -> Void) throws {
        guard let value = try read(reader, slot) else { return }
        let scratch = RecordBuilder()
        scratch.begin(slotCount: 1)
        try write(scratch, value)
        let back = try read(RecordReader(scratch.bytes), 0)
        precondition(back == value, "\(type) changed through a write and read")
    }
    switch type {
    case .list(of: .string)!: try same({ try $0.list(String.self, slot: $1) }) { try $0.add($1, slot: 0) }
    case .list(of: .long)!: try same({ try $0.list(Int64.self, slot: $1) }) { try $0.add($1, slot: 0) }
    case .set(of: .int)!: try same({ try $0.set(Int32.self, slot: $1) }) { try $0.add($1, slot: 0) }
    case .set(of: .string)!: try same({ try $0.set(String.self, slot: $1) }) { try $0.add($1, slot: 0) }
    case .map(of: .string)!: try same({ try $0.map(String.self, slot: $1) }) { try $0.add($1, slot: 0) }
    case .map(of: .double)!: try same({ try $0.map(Double.self, slot: $1)?.mapValues(\.bitPattern) }) { try $0.add($1.mapValues(Double.init(bitPattern:)), slot: 0) }
    case .list(of: .uuid)!: try same({ try $0.list(UUID.self, slot: $1) }) { try $0.add($1, slot: 0) }
    case .list(of: .bool)!: try same({ try $0.list(Bool.self, slot: $1) }) { try $0.add($1, slot: 0) }
    case .list(of: .byteVector)!: try same({ try $0.list(Data.self, slot: $1) }) { try $0.add($1, slot: 0) }
    case .set(of: .short)!: try same({ try $0.set(Int16.self, slot: $1) }) { try $0.add($1, slot: 0) }
    default: break
    }
}

// libFuzzer calls the target from one thread.
nonisolated(unsafe) let builder = RecordBuilder()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let typed = Int(data[0] % 32)
    guard size >= 1 + typed else { return 0 }
    let slotTypes: [PropertyType?] = (0..<typed).map { i in
        let pick = Int(data[1 + i])
        return pick < types.count * 8 ? types[pick % types.count] : nil
    }
    let record = UnsafeRawBufferPointer(start: data + 1 + typed, count: size - 1 - typed)
    guard let reader = try? RecordReader(record) else { return 0 }
    // Every accessor on every slot, whatever the slot holds: values or thrown errors only.
    for slot in -1...(reader.slots + 1) {
        _ = try? reader.has(slot: slot)
        _ = try? reader.bool(slot: slot)
        _ = try? reader.read(Int64.self, slot: slot)
        _ = try? reader.read(Int8.self, slot: slot)
        _ = try? reader.double(slot: slot)
        _ = try? reader.string(slot: slot)
        _ = try? reader.data(slot: slot)
        _ = try? reader.date(slot: slot)
        _ = try? reader.dateNanoseconds(slot: slot)
        _ = try? reader.uuid(slot: slot)
    }
    guard (try? reader.verify(types: slotTypes)) != nil, let values = try? readAll(reader, slotTypes) else { return 0 }
    for (slot, type) in slotTypes.enumerated() {
        guard let type, type.collection != nil else { continue }
        do {
            try checkCollection(reader, slot: slot, type)
        } catch {
            fatalError("a verified \(type) in slot \(slot) does not read, or does not write back: \(error)")
        }
    }
    // Slots beyond the record read as absent; write back only the record's own slots.
    let own = Array(values.prefix(reader.slots))
    write(own, Array(slotTypes.prefix(reader.slots)), into: builder)
    let again: [Value]
    do {
        again = try readAll(RecordReader(builder.bytes), Array(slotTypes.prefix(reader.slots)))
    } catch {
        fatalError("a record written by RecordBuilder does not read: \(error)")
    }
    precondition(again == own, "values changed through a write and read: \(own) → \(again)")
    return 0
}
