@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// `FlexValue` and its encoding: round trips, the limits on write and on read, lookups in place,
/// and corrupt bytes (which must throw `fileCorrupt`, never trap).
@Suite struct FlexValueTests {
    static let someUUID = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

    /// One value of every case, nested.
    static let everything: FlexValue = [
        "null": nil, "false": false, "true": true,
        "integers": [0, 1, -1, .integer(.max), .integer(.min)],
        "doubles": [0.5, -0.0, .double(.infinity), .double(.nan), .double(-.nan), .double(.leastNonzeroMagnitude)],
        "strings": ["", "plain", "é ü 日本 🎉", "e\u{301}"],
        "bytes": [.bytes(Data()), .bytes(Data([0, 1, 255]))],
        "dates": [.date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: 1_700_000_000.123)), .date(Date(timeIntervalSince1970: -86_400.5))],
        "uuid": .uuid(someUUID),
        "empty": [[], [:]],
        "": ["nested": [["deep": [1, [2, [3]]]]]],
    ]

    static func roundTrip(_ value: FlexValue) throws -> FlexValue {
        let bytes = try FlexEncoding.encode(value)
        return try bytes.withUnsafeBytes { raw in
            try FlexEncoding.verify(raw)
            return try FlexEncoding.decode(raw)
        }
    }

    static func nested(_ depth: Int) -> FlexValue {
        var value: FlexValue = "leaf"
        for i in 0..<depth { value = i % 2 == 0 ? [value] : ["k": value] }
        return value
    }

    /// Whether `body` throws `fileCorrupt` (any other error, or none, is a failure of the test).
    static func isCorrupt(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> Void) -> Bool {
        do {
            try bytes.withUnsafeBytes(body)
            return false
        } catch CellarError.Code.fileCorrupt {
            return true
        } catch {
            Issue.record("unexpected error \(error)")
            return false
        }
    }

    /// Both `decode` and `verify` throw `fileCorrupt` for `bytes`.
    static func expectCorrupt(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(isCorrupt(bytes) { _ = try FlexEncoding.decode($0) }, "decode", sourceLocation: sourceLocation)
        #expect(isCorrupt(bytes) { try FlexEncoding.verify($0) }, "verify", sourceLocation: sourceLocation)
    }

    static func u32(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(value).littleEndian) { Array($0) } }
    static func key(_ text: [UInt8]) -> [UInt8] { u32(text.count) + text }
    static func map(_ entries: [([UInt8], [UInt8])]) -> [UInt8] {
        let body = entries.flatMap { key($0.0) + $0.1 }
        return [FlexEncoding.tagMap] + u32(entries.count) + u32(body.count) + body
    }

    // MARK: Round trips

    @Test func everyCaseRoundTrips() throws {
        #expect(try Self.roundTrip(Self.everything) == Self.everything)
        let scalars: [FlexValue] = [nil, true, 42, 2.5, "text", .bytes(Data([9])), .date(Date(timeIntervalSince1970: 12.345)), .uuid(Self.someUUID), [], [:]]
        for value in scalars { #expect(try Self.roundTrip(value) == value) }
        // NaN equals itself by bit pattern; the two zeros differ.
        #expect(FlexValue.double(.nan) == .double(.nan) && FlexValue.double(0) != .double(-0.0))
        #expect(FlexValue.integer(1) != .double(1))
        // A date is rounded to the nearest millisecond.
        #expect(try Self.roundTrip(.date(Date(timeIntervalSince1970: 1.0006))) == .date(Date(timeIntervalSince1970: 1.001)))
    }

    @Test func theBytesAreTheDocumentedOnes() throws {
        let value: FlexValue = ["b": 1, "a": [true, nil]]
        let expected: [UInt8] = [11] + Self.u32(2) + Self.u32(30)
            + Self.u32(1) + [0x61] + [10] + Self.u32(2) + Self.u32(2) + [3, 1]
            + Self.u32(1) + [0x62] + [4, 1, 0, 0, 0, 0, 0, 0, 0]
        #expect(try FlexEncoding.encode(value) == expected)
        #expect(try FlexEncoding.encode("hé") == [8] + Self.u32(3) + [0x68, 0xC3, 0xA9])
        #expect(try FlexEncoding.encode(.uuid(Self.someUUID)) == [7] + UUIDEncoding.bytes(Self.someUUID))
        #expect(try FlexEncoding.encode(.date(Date(timeIntervalSince1970: -0.002))) == [6, 0xFE] + [UInt8](repeating: 0xFF, count: 7))
        var appended: [UInt8] = [0xAA]
        try FlexEncoding.append(nil, to: &appended)
        #expect(appended == [0xAA, 1])
    }

    @Test func literalsAndAccessors() {
        let value: FlexValue = ["user": ["name": "Ada", "age": 36, "score": 1.5, "ok": true], "tags": ["a", "b"], "none": nil]
        #expect(value["user"]?["name"]?.stringValue == "Ada")
        #expect(value["user"]?["age"]?.intValue == 36 && value["user"]?["age"]?.doubleValue == 36)
        #expect(value["user"]?["score"]?.doubleValue == 1.5 && value["user"]?["score"]?.intValue == nil)
        #expect(value["user"]?["ok"]?.boolValue == true)
        #expect(value["tags"]?[1] == "b" && value["tags"]?[2] == nil && value["tags"]?[-1] == nil)
        #expect(value["none"]?.isNull == true && value["missing"] == nil && value[0] == nil)
        #expect(value["tags"]?.listValue?.count == 2 && value.mapValue?.count == 3)
        let repeated: FlexValue = ["k": 1, "k": 2]
        #expect(repeated == ["k": 2], "the last value of a repeated key")
        #expect(FlexValue.date(Date(timeIntervalSince1970: 1)).dateValue == Date(timeIntervalSince1970: 1))
        #expect(FlexValue.uuid(Self.someUUID).uuidValue == Self.someUUID && FlexValue.bytes(Data([1])).dataValue == Data([1]))
    }

    @Test func equalMapsEncodeToEqualBytes() throws {
        let keys = (0..<200).map { "key \($0) \(String(repeating: "é", count: $0 % 3))" }
        var forward: [String: FlexValue] = [:]
        for (i, key) in keys.enumerated() { forward[key] = .integer(Int64(i)) }
        var backward: [String: FlexValue] = [:]
        backward.reserveCapacity(5_000)
        for (i, key) in Array(keys.enumerated()).reversed() { backward[key] = .integer(Int64(i)) }
        #expect(Array(forward.keys) != Array(backward.keys), "the two dictionaries iterate in different orders")
        let a = try FlexEncoding.encode(.map(forward))
        let b = try FlexEncoding.encode(.map(backward))
        #expect(a == b)
        #expect(try Self.roundTrip(.map(forward)) == .map(backward))
    }

    // MARK: Limits

    @Test func nestingToTheLimitWorksAndOneMoreThrows() throws {
        #expect(try Self.roundTrip(Self.nested(FlexEncoding.maxDepth)) == Self.nested(FlexEncoding.maxDepth))
        #expect(try Self.roundTrip(Self.nested(FlexEncoding.maxDepth - 1)) == Self.nested(FlexEncoding.maxDepth - 1))
        #expect(try Self.roundTrip(.list([Self.nested(FlexEncoding.maxDepth - 1)])) == .list([Self.nested(FlexEncoding.maxDepth - 1)]))
        var bytes: [UInt8] = [0x55]
        let error = #expect(throws: CellarError.self) { try FlexEncoding.append(Self.nested(FlexEncoding.maxDepth + 1), to: &bytes) }
        guard let error, error.code == .illegalArgument else { Issue.record("\(String(describing: error))"); return }
        let message = error.message
        #expect(message.contains("maxDepth"))
        #expect(bytes == [0x55], "a failed append leaves the bytes as they were")
        // The same too deep on read: 101 lists, each holding the next.
        let deep = Self.nestedListBytes(FlexEncoding.maxDepth + 1)
        Self.expectCorrupt(deep)
        // One list less reads.
        let allowed = Array(deep[9...])
        #expect(try allowed.withUnsafeBytes { try FlexEncoding.decode($0) } == Self.nestedLists(FlexEncoding.maxDepth))
    }

    /// `depth` lists (or maps, with empty keys), each holding the next, around a null; built
    /// from the inside out without copying the inner bytes at every level.
    static func nestedListBytes(_ depth: Int, map: Bool = false) -> [UInt8] {
        var headers: [[UInt8]] = []
        var length = 1
        for _ in 0..<depth {
            let header = map ? [11] + u32(1) + u32(length + 4) + u32(0) : [10] + u32(1) + u32(length)
            headers.append(header)
            length += header.count
        }
        return headers.reversed().flatMap { $0 } + [1]
    }

    static func nestedLists(_ depth: Int) -> FlexValue {
        (0..<depth).reduce(FlexValue.null) { value, _ in [value] }
    }

    @Test func writeLimits() throws {
        #expect(throws: CellarError.self) { try FlexEncoding.encode(.date(Date(timeIntervalSince1970: 1.2e12))) }
        #expect(throws: CellarError.self) { try FlexEncoding.encode(.date(Date(timeIntervalSince1970: .nan))) }
        let limit = Date(timeIntervalSince1970: Double(FlexEncoding.maxDateMilliseconds) / 1_000)
        #expect(try Self.roundTrip(.date(limit)) == .date(limit))
        let lowest = Date(timeIntervalSince1970: -Double(FlexEncoding.maxDateMilliseconds) / 1_000)
        #expect(try Self.roundTrip(.date(lowest)) == .date(lowest))
        // One element too many is refused before anything is written.
        let tooMany = FlexValue.list([FlexValue](repeating: .null, count: FlexEncoding.maxElements + 1))
        let error = #expect(throws: CellarError.self) { try FlexEncoding.encode(tooMany) }
        guard let error, error.code == .illegalArgument else { Issue.record("\(String(describing: error))"); return }
        let message = error.message
        #expect(message.contains("maxElements"))
    }

    // MARK: Lookups in place

    @Test func findFollowsPaths() throws {
        let bytes = try FlexEncoding.encode(Self.everything)
        try bytes.withUnsafeBytes { raw in
            func find(_ path: FlexPathComponent...) throws -> FlexScalar? { try FlexEncoding.find(path, in: raw) }
            guard case .map(let count) = try find() else { Issue.record("the whole value"); return }
            #expect(count == 11)
            guard case .integer(-1) = try find(.key("integers"), .index(2)) else { Issue.record("integers[2]"); return }
            guard case .integer(.min) = try find(.key("integers"), .index(4)) else { Issue.record("integers[4]"); return }
            guard case .string(let text) = try find(.key("strings"), .index(2)) else { Issue.record("strings[2]"); return }
            #expect(Array(text) == Array("é ü 日本 🎉".utf8))
            guard case .double(let nan) = try find(.key("doubles"), .index(3)), nan.isNaN else { Issue.record("doubles[3]"); return }
            guard case .integer(2) = try find(.key(""), .key("nested"), .index(0), .key("deep"), .index(1), .index(0)) else { Issue.record("deep"); return }
            guard case .list(count: 1) = try find(.key(""), .key("nested"), .index(0), .key("deep"), .index(1), .index(1)) else { Issue.record("deep list"); return }
            guard case .uuid(let uuid) = try find(.key("uuid")) else { Issue.record("uuid"); return }
            #expect(UUIDEncoding.uuid(uuid) == Self.someUUID)
            guard case .date(milliseconds: 1_700_000_000_123) = try find(.key("dates"), .index(1)) else { Issue.record("date"); return }
            guard case .null = try find(.key("null")) else { Issue.record("null"); return }
            guard case .bool(true) = try find(.key("true")) else { Issue.record("true"); return }
            guard case .map(count: 0) = try find(.key("empty"), .index(1)) else { Issue.record("empty map"); return }
            // Paths that do not exist.
            #expect(try find(.key("missing")) == nil)
            #expect(try find(.key("nul")) == nil && find(.key("nulls")) == nil && find(.key("zzz")) == nil)
            #expect(try find(.key("integers"), .index(5)) == nil && find(.key("integers"), .index(-1)) == nil)
            #expect(try find(.key("integers"), .key("0")) == nil, "a key into a list")
            #expect(try find(.index(0)) == nil, "an index into a map")
            #expect(try find(.key("true"), .index(0)) == nil && find(.key("uuid"), .key("x")) == nil, "a step into a scalar")
            #expect(try find(.key("strings"), .index(0), .index(0)) == nil)
        }
        // At top level, a scalar has no elements.
        try FlexEncoding.encode(7).withUnsafeBytes { raw in
            #expect(try FlexEncoding.find([.index(0)], in: raw) == nil)
            guard case .integer(7) = try FlexEncoding.find([], in: raw) else { Issue.record("7"); return }
        }
        // A lookup checks the bounds of the whole value, and the order of the keys it passes.
        Self.expectFindCorrupt(try FlexEncoding.encode(["a": 1]) + [0])
        let unsorted = Self.map([(Array("b".utf8), [1]), (Array("a".utf8), [1])])
        Self.expectFindCorrupt(unsorted, path: [.key("c")])
        // An invalid tag met on the way.
        Self.expectFindCorrupt([10] + Self.u32(1) + Self.u32(1) + [0], path: [.index(0), .index(0)])
    }

    static func expectFindCorrupt(_ bytes: [UInt8], path: [FlexPathComponent] = [], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(isCorrupt(bytes) { _ = try FlexEncoding.find(path, in: $0) }, sourceLocation: sourceLocation)
    }

    // MARK: Corrupt bytes

    @Test func everyPrefixOfAnEncodingIsCorrupt() throws {
        let bytes = try FlexEncoding.encode(Self.everything)
        for length in 0..<bytes.count {
            let prefix = Array(bytes[..<length])
            Self.expectCorrupt(prefix)
            Self.expectFindCorrupt(prefix)
        }
    }

    @Test func corruptHeadersTagsAndKeys() throws {
        // Unknown tags.
        for tag: UInt8 in [0, 12, 0x80, 255] { Self.expectCorrupt([tag]) }
        Self.expectCorrupt([10] + Self.u32(1) + Self.u32(1) + [12])
        // Counts claiming more than is there (nothing is allocated for them), or beyond the limit.
        Self.expectCorrupt([10] + Self.u32(Int(UInt32.max)) + Self.u32(Int(UInt32.max)) + [1])
        Self.expectCorrupt([10] + Self.u32(1_000_000) + Self.u32(3) + [1, 1, 1])
        Self.expectCorrupt([11] + Self.u32(1) + Self.u32(4) + Self.u32(0))
        Self.expectCorrupt([10] + Self.u32(FlexEncoding.maxElements + 1) + Self.u32(FlexEncoding.maxElements + 1) + [UInt8](repeating: 1, count: FlexEncoding.maxElements + 1))
        Self.expectCorrupt([8] + Self.u32(1_000))
        // A body longer or shorter than its elements.
        Self.expectCorrupt([10] + Self.u32(1) + Self.u32(2) + [1, 1])
        Self.expectCorrupt([10] + Self.u32(2) + Self.u32(1) + [1, 1])
        // A string running past its list's body.
        Self.expectCorrupt([10] + Self.u32(1) + Self.u32(5) + [8] + Self.u32(1) + [0x61])
        // Bytes after the value.
        Self.expectCorrupt([1, 1])
        // Keys out of order, repeated, or equal only as Strings (the Kelvin sign is "K").
        Self.expectCorrupt(Self.map([(Array("b".utf8), [1]), (Array("a".utf8), [1])]))
        Self.expectCorrupt(Self.map([(Array("a".utf8), [1]), (Array("a".utf8), [1])]))
        Self.expectCorrupt(Self.map([(Array("ab".utf8), [1]), (Array("a".utf8), [1])]))
        Self.expectCorrupt(Self.map([(Array("K".utf8), [1]), (Array("x".utf8), [2]), (Array("\u{212A}".utf8), [1])]))
        Self.expectCorrupt(Self.map([(Array("\u{E9}".utf8), [1]), (Array("e\u{301}".utf8), [1])].sorted { $0.0.lexicographicallyPrecedes($1.0) }))
        #expect(try Self.roundTrip(["a": 1, "ab": 2, "b": 3, "K": 4, "é": 5]) == ["a": 1, "ab": 2, "b": 3, "K": 4, "é": 5])
        // Invalid UTF-8 in a string and in a key: a lone continuation byte, an overlong encoding,
        // a surrogate, a truncated sequence.
        for bad: [UInt8] in [[0x80], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0x61, 0xE2, 0x82]] {
            Self.expectCorrupt([8] + Self.key(bad))
            Self.expectCorrupt(Self.map([(bad, [1])]))
            Self.expectFindCorrupt([8] + Self.key(bad))
        }
        // Dates beyond the limit.
        Self.expectCorrupt([6] + withUnsafeBytes(of: (FlexEncoding.maxDateMilliseconds + 1).littleEndian) { Array($0) })
        Self.expectCorrupt([6] + withUnsafeBytes(of: Int64.min.littleEndian) { Array($0) })
        // And a value that is fine after all that: the checks are not too strict.
        #expect(try [UInt8]([10] + Self.u32(2) + Self.u32(2) + [2, 3]).withUnsafeBytes { try FlexEncoding.decode($0) } == [false, true])
    }

    @Test func depthBombsThrow() throws {
        // 10,000 list tags with nothing after them, and 10,000 well-formed nested lists: both must
        // throw (the depth is checked before it can exhaust the stack).
        Self.expectCorrupt([UInt8](repeating: 10, count: 10_000))
        let deep = Self.nestedListBytes(10_000)
        Self.expectCorrupt(deep)
        Self.expectFindCorrupt(deep, path: [FlexPathComponent](repeating: .index(0), count: 200))
        let shallow = try deep.withUnsafeBytes { try FlexEncoding.find([FlexPathComponent](repeating: .index(0), count: 20), in: $0) }
        guard case .list(count: 1) = shallow else { Issue.record("20 lists down"); return }
        // Maps the same way.
        Self.expectCorrupt(Self.nestedListBytes(10_000, map: true))
    }

    // MARK: Records

    @Test func flexFieldsInRecords() throws {
        let builder = RecordBuilder()
        builder.begin(slotCount: 4)
        try builder.add(Self.everything, slot: 0)
        try builder.add(FlexValue?.none, slot: 1)
        try builder.add(FlexValue?.some(nil), slot: 2)
        builder.add("after", slot: 3)
        let reader = try RecordReader(builder.bytes)
        #expect(try reader.flex(slot: 0) == Self.everything)
        #expect(try reader.flex(slot: 1) == nil && reader.flex(slot: 2) == .null && reader.flex(slot: 9) == nil)
        #expect(try reader.string(slot: 3) == "after")
        try reader.verify(types: [.flex, .flex, .flex, .string])
        #expect(PropertyType.flex.isSupported && PropertyType.flex.description == "Flex" && PropertyType.flex.fixedWidth == nil)

        // A value beyond the limits adds nothing.
        builder.begin(slotCount: 1)
        #expect(throws: CellarError.self) { try builder.add(Self.nested(FlexEncoding.maxDepth + 1), slot: 0) }
        #expect(try RecordReader(builder.bytes).has(slot: 0) == false)

        // A field that is not a Flex encoding fails verification and the read.
        builder.begin(slotCount: 2)
        builder.add([UInt8]([10, 1, 0, 0, 0, 1, 0, 0, 0, 0]), slot: 0)
        builder.add([UInt8](), slot: 1)
        let corrupt = try RecordReader(builder.bytes)
        #expect(throws: CellarError.self) { try corrupt.verify(types: [.flex]) }
        #expect(throws: CellarError.self) { try corrupt.flex(slot: 0) }
        #expect(throws: CellarError.self) { try corrupt.flex(slot: 1) }
        try corrupt.verify(types: [.byteVector, .byteVector])
    }

    // MARK: Random values

    static func randomValue(_ rng: inout SplitMix64, depth: Int) -> FlexValue {
        let pick = rng.next() % (depth > 0 ? 12 : 9)
        switch pick {
        case 0: return nil
        case 1: return .bool(rng.next() % 2 == 0)
        case 2: return .integer(Int64(bitPattern: rng.next()) >> (rng.next() % 64))
        case 3: return .double(Double(bitPattern: rng.next()))
        case 4: return .string(randomString(&rng))
        case 5: return .bytes(Data((0..<rng.next() % 12).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
        case 6:
            let milliseconds = Int64(bitPattern: rng.next()) % FlexEncoding.maxDateMilliseconds
            return .date(DateEncoding.date(milliseconds: milliseconds))
        case 7: return .uuid(UUID(uuid: (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) }.withUnsafeBytes { $0.load(as: uuid_t.self) }))
        case 8: return .integer(Int64(rng.next() % 100))
        case 9, 10: return .list((0..<rng.next() % 5).map { _ in randomValue(&rng, depth: depth - 1) })
        default:
            var map: [String: FlexValue] = [:]
            for _ in 0..<rng.next() % 5 { map[randomString(&rng)] = randomValue(&rng, depth: depth - 1) }
            return .map(map)
        }
    }

    static func randomString(_ rng: inout SplitMix64) -> String {
        let alphabet: [Character] = ["a", "b", "K", "\u{212A}", "é", "e", "\u{301}", "日", "🎉", " ", "\0"]
        return String((0..<rng.next() % 6).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
    }

    /// A random path to a value inside `value` (or just past it), and what is there.
    static func randomPath(_ rng: inout SplitMix64, in value: FlexValue) -> ([FlexPathComponent], FlexValue?) {
        var path: [FlexPathComponent] = []
        var current: FlexValue? = value
        while let here = current, rng.next() % 4 != 0 {
            switch here {
            case .list(let list):
                let index = Int(rng.next() % UInt64(list.count + 1))
                path.append(.index(index))
                current = here[index]
            case .map(let map):
                let key = rng.next() % 3 == 0 || map.isEmpty ? randomString(&rng) : map.keys.sorted()[Int(rng.next() % UInt64(map.count))]
                path.append(.key(key))
                current = map.first { Array($0.key.utf8) == Array(key.utf8) }?.value
            default:
                path.append(.index(0))
                current = nil
            }
        }
        return (path, current)
    }

    static func matches(_ found: FlexScalar?, _ value: FlexValue?) -> Bool {
        switch (found, value) {
        case (nil, nil), (.null?, .null?): return true
        case (.bool(let a)?, .bool(let b)?): return a == b
        case (.integer(let a)?, .integer(let b)?): return a == b
        case (.double(let a)?, .double(let b)?): return a.bitPattern == b.bitPattern
        case (.string(let a)?, .string(let b)?): return Array(a) == Array(b.utf8)
        case (.bytes(let a)?, .bytes(let b)?): return Array(a) == Array(b)
        case (.date(let a)?, .date(let b)?): return a == (try? DateEncoding.milliseconds(b))
        case (.uuid(let a)?, .uuid(let b)?): return UUIDEncoding.uuid(a) == b
        case (.list(let a)?, .list(let b)?): return a == b.count
        case (.map(let a)?, .map(let b)?): return a == b.count
        default: return false
        }
    }

    @Test func randomValuesRoundTripAndMutationsNeverCrash() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        var decodedMutations = 0
        for _ in 0..<400 {
            let value = Self.randomValue(&rng, depth: 4)
            let bytes = try FlexEncoding.encode(value)
            #expect(try Self.roundTrip(value) == value, "seed \(seed)")
            try bytes.withUnsafeBytes { raw in
                for _ in 0..<4 {
                    let (path, expected) = Self.randomPath(&rng, in: value)
                    let found = try FlexEncoding.find(path, in: raw)
                    #expect(Self.matches(found, expected), "seed \(seed): \(path) in \(value)")
                }
            }
            for _ in 0..<20 {
                var mutated = bytes
                mutated[Int(rng.next() % UInt64(mutated.count))] = UInt8(truncatingIfNeeded: rng.next())
                let decoded: FlexValue?
                do {
                    decoded = try mutated.withUnsafeBytes { try FlexEncoding.decode($0) }
                } catch CellarError.Code.fileCorrupt {
                    decoded = nil
                }
                let verified = !Self.isCorrupt(mutated) { try FlexEncoding.verify($0) }
                #expect(verified == (decoded != nil), "seed \(seed): verify and decode disagree on \(mutated)")
                if let decoded {
                    decodedMutations += 1
                    #expect(try Self.roundTrip(decoded) == decoded, "seed \(seed)")
                }
                _ = Self.isCorrupt(mutated) { _ = try FlexEncoding.find([.key("a"), .index(0)], in: $0) }
            }
        }
        #expect(decodedMutations > 0, "some mutations (of a payload byte) still decode")
    }

    /// Every millisecond count within the limit reads as a date that writes again as the same count.
    @Test func datesWithinTheLimitAreExact() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let edges: [Int64] = [0, 1, -1, FlexEncoding.maxDateMilliseconds, -FlexEncoding.maxDateMilliseconds, FlexEncoding.maxDateMilliseconds - 1]
        let random = (0..<20_000).map { _ in Int64(bitPattern: rng.next()) % (FlexEncoding.maxDateMilliseconds + 1) }
        for milliseconds in edges + random {
            #expect(try DateEncoding.milliseconds(DateEncoding.date(milliseconds: milliseconds)) == milliseconds, "seed \(seed)")
        }
    }
}
