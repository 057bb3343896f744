// libFuzzer target: Flex values (`FlexEncoding`), the bytes of every Flex field Cellar reads.
//
// Input: the encoding of one value. `verify` and `decode` must agree: both succeed, or both throw
// `CellarError.fileCorrupt` (any other error, a crash, a trap or an AddressSanitizer report is a
// bug in Cellar). What decodes is encoded again and must give the input's bytes exactly (an
// encoding that decodes is the only encoding of its value: keys sorted, lengths exact) and decode
// to an equal value. `find` runs with paths made from the input and from the decoded value; it
// must not crash, and on a value that decodes it must find what the decoded value has there.
@_spi(CellarGenerated) @_spi(Testing) import Cellar
import Foundation

/// Whether `body` succeeds; false when it throws `fileCorrupt`, a trap for any other error.
func succeeds(_ what: String, _ body: () throws -> Void) -> Bool {
    do {
        try body()
        return true
    } catch CellarError.Code.fileCorrupt {
        return false
    } catch {
        fatalError("\(what) threw \(error), not fileCorrupt")
    }
}

/// The value at `path` in `value`, with keys compared by their UTF-8 bytes, as `find` compares them.
func lookUp(_ path: [FlexPathComponent], in value: FlexValue) -> FlexValue? {
    var current = value
    for component in path {
        switch (component, current) {
        case (.index(let index), .list(let list)) where list.indices.contains(index):
            current = list[index]
        case (.key(let key), .map(let map)):
            guard let entry = map.first(where: { $0.key.utf8.elementsEqual(key.utf8) }) else { return nil }
            current = entry.value
        default:
            return nil
        }
    }
    return current
}

/// Whether a value found in place is `value`.
func matches(_ found: FlexScalar?, _ value: FlexValue?) -> Bool {
    switch (found, value) {
    case (nil, nil), (.null?, .null?): return true
    case (.bool(let a)?, .bool(let b)?): return a == b
    case (.integer(let a)?, .integer(let b)?): return a == b
    case (.double(let a)?, .double(let b)?): return a.bitPattern == b.bitPattern
    case (.string(let a)?, .string(let b)?): return a.elementsEqual(b.utf8)
    case (.bytes(let a)?, .bytes(let b)?): return a.elementsEqual(b)
    case (.date(let a)?, .date(let b)?): return a == (try? DateEncoding.milliseconds(b))
    case (.uuid(let a)?, .uuid(let b)?): return UUIDEncoding.uuid(a) == b
    case (.list(let a)?, .list(let b)?): return a == b.count
    case (.map(let a)?, .map(let b)?): return a == b.count
    default: return false
    }
}

/// A few paths into `value`: down its first and last elements, and past its ends.
func paths(into value: FlexValue) -> [[FlexPathComponent]] {
    var result: [[FlexPathComponent]] = []
    for pick in 0..<3 {
        var path: [FlexPathComponent] = []
        var current = value
        while path.count < 8 {
            if case .list(let list) = current, !list.isEmpty {
                let index = pick == 0 ? 0 : list.count - 1
                path.append(.index(index))
                current = list[index]
            } else if case .map(let map) = current, !map.isEmpty {
                let keys = map.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                let key = pick == 0 ? keys[0] : keys[keys.count - 1]
                path.append(.key(key))
                current = map[key]!
            } else {
                break
            }
        }
        if pick == 2 { path.append(.index(Int.max)) }
        result.append(path)
    }
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    var decoded: FlexValue?
    let decodes = succeeds("decode") { decoded = try FlexEncoding.decode(bytes) }
    let verifies = succeeds("verify") { try FlexEncoding.verify(bytes) }
    precondition(decodes == verifies, "decode \(decodes ? "succeeds" : "fails") where verify \(verifies ? "succeeds" : "fails")")

    // Paths from the input's own bytes: a key of its first bytes, indexes of its first byte.
    let head = String(decoding: bytes.prefix(3), as: UTF8.self)
    var tried: [[FlexPathComponent]] = [[], [.index(Int(size > 0 ? data[0] % 4 : 0))], [.key(head)], [.index(0), .key(head)], [.key(""), .index(1)]]
    if let decoded { tried += paths(into: decoded) }
    for path in tried {
        var found: FlexScalar?
        let ok = succeeds("find") { found = try FlexEncoding.find(path, in: bytes) }
        if let decoded {
            precondition(ok, "find fails on a value that decodes, path \(path)")
            precondition(matches(found, lookUp(path, in: decoded)), "find gives \(String(describing: found)) at \(path) in \(decoded)")
        }
    }

    guard let decoded else { return 0 }
    let again: [UInt8]
    do {
        again = try FlexEncoding.encode(decoded)
    } catch {
        fatalError("a decoded value does not encode: \(error)")
    }
    precondition(again.elementsEqual(bytes), "a decoded value encodes to other bytes: \(Array(bytes)) → \(again)")
    let redecoded = again.withUnsafeBytes { try? FlexEncoding.decode($0) }
    precondition(redecoded == decoded, "a value changed through an encode and decode: \(decoded) → \(String(describing: redecoded))")
    return 0
}
