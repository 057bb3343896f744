@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// `FlexValue` properties through the generated `Post` binding: round trips, and conditions on
/// paths into them (values at keys and indexes, numeric comparisons across integers and doubles,
/// strings, type tests, containsKey, nil) compared with the same filter over the objects in memory.
@Suite struct FlexQueryTests {
    static func payload(_ random: inout SplitMix64) -> FlexValue {
        func scalar() -> FlexValue {
            switch random.next() % 9 {
            case 0: return .null
            case 1: return .bool(random.next() % 2 == 0)
            case 2: return .integer(Int64(random.next() % 12) - 2)
            case 3: return .double(Double(random.next() % 24) / 2 - 2)
            case 4: return .string(["red", "Red", "blue", "", "rö"][Int(random.next() % 5)])
            case 5: return .date(Date(timeIntervalSince1970: Double(random.next() % 4) * 1000))
            case 6: return .uuid(UUID(uuid: (UInt8(random.next() % 3), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
            case 7: return .list([.integer(Int64(random.next() % 5)), .string("x")])
            default: return .bytes(Data([UInt8(random.next() % 3)]))
            }
        }
        switch random.next() % 5 {
        case 0: return scalar()
        case 1: return .list((0..<Int(random.next() % 4)).map { _ in scalar() })
        default:
            var user: [String: FlexValue] = [:]
            if random.next() % 4 != 0 { user["age"] = scalar() }
            if random.next() % 2 == 0 { user["name"] = scalar() }
            var top: [String: FlexValue] = ["user": .map(user)]
            if random.next() % 2 == 0 { top["color"] = scalar() }
            if random.next() % 3 == 0 { top["tags"] = .list([scalar(), scalar()]) }
            return .map(top)
        }
    }

    /// What the query rules say a stored value compares as (nil: does not compare).
    static func number(_ value: FlexValue?) -> Double? {
        switch value {
        case .integer(let v)?: Double(v)
        case .double(let v)?: v.isNaN ? nil : v
        case .bool(let b)?: b ? 1 : 0
        default: nil
        }
    }

    static func isNil(_ value: FlexValue?) -> Bool {
        if case .null? = value { return true }
        return value == nil
    }

    @Test func flexValuesRoundTripAndQueryByPath() throws {
        let store = try Store(directoryPath: "memory:flex-queries", model: cellarModel())
        let box = store.box(for: Post.self)
        var random = SplitMix64(seed: 31)
        var posts: [Post] = []
        for _ in 0..<1500 {
            let post = Post()
            post.payload = Self.payload(&random)
            if random.next() % 2 == 0 { post.extra = Self.payload(&random) }
            posts.append(post)
        }
        let plain = Post()   // payload .null, extra nil
        posts.append(plain)
        try box.put(posts)
        let objects = try box.all()
        for (stored, original) in zip(objects, posts) {
            #expect(stored.payload == original.payload && stored.extra == original.extra)
        }

        func check(_ name: String, _ condition: QueryCondition<Post>, _ filter: (Post) -> Bool) throws {
            let query = try box.query { condition }.build()
            let expected = objects.filter(filter).map(\.id)
            #expect(try query.findIds().map(\.value) == expected, "\(name)")
            #expect(try query.count() == expected.count, "\(name) count")
            // Every condition here picks some objects and leaves others: the data covers both sides.
            #expect(!expected.isEmpty && expected.count < objects.count, "\(name): \(expected.count) of \(objects.count)")
        }
        func age(_ post: Post) -> FlexValue? { post.payload["user"]?["age"] }
        try check("nested > 5", Post.payload["user"]["age"] > 5) { (Self.number(age($0)) ?? -.infinity) > 5 }
        try check("nested == 7", Post.payload["user"]["age"] == 7) { Self.number(age($0)) == 7 }
        try check("nested == 2.5", Post.payload["user"]["age"] == 2.5) { Self.number(age($0)) == 2.5 }
        try check("nested between", Post.payload["user"]["age"].isBetween(0, and: 4)) { (0...4).contains(Self.number(age($0)) ?? .nan) }
        try check("nested != 7", Post.payload["user"]["age"] != 7) { !Self.isNil(age($0)) && Self.number(age($0)) != 7 }
        try check("string ==", Post.payload["color"] == "red") { $0.payload["color"]?.stringValue == "red" }
        try check("string ignoring case", Post.payload["color"].isEqual(to: "RED", caseSensitive: false)) { $0.payload["color"]?.stringValue?.lowercased() == "red" }
        try check("string isIn", Post.payload["color"].isIn(["blue", "rö"])) { ["blue", "rö"].contains($0.payload["color"]?.stringValue ?? "-") }
        try check("string startsWith", Post.payload["user"]["name"].startsWith("r")) { $0.payload["user"]?["name"]?.stringValue?.hasPrefix("r") == true }
        try check("isNil", Post.payload["user"]["age"].isNil()) { Self.isNil(age($0)) }
        try check("isNotNil", Post.payload["color"].isNotNil()) { !Self.isNil($0.payload["color"]) }
        try check("containsKey", Post.payload.containsKey("tags")) { $0.payload["tags"] != nil }
        try check("path containsKey", Post.payload["user"].containsKey("name")) { $0.payload["user"]?["name"] != nil }
        try check("list index", Post.payload[0] == 3) { Self.number($0.payload[0]) == 3 }
        try check("index into nested list", Post.payload["tags"][1].hasType(.string)) {
            if case .string? = $0.payload["tags"]?[1] { return true } else { return false }
        }
        try check("top type map", Post.payload.hasType(.map)) { if case .map = $0.payload { true } else { false } }
        try check("top type null", Post.payload.hasType(.null)) { $0.payload == .null }
        try check("optional nil", Post.extra.isNil()) { $0.extra == nil || $0.extra == .null }
        try check("date", Post.payload["color"] == Date(timeIntervalSince1970: 2000)) { $0.payload["color"] == .date(Date(timeIntervalSince1970: 2000)) }
        try check("uuid", Post.payload["user"]["name"] == UUIDEncoding.zero) { $0.payload["user"]?["name"] == .uuid(UUIDEncoding.zero) }
        try check("combined", Post.payload["user"]["age"] >= 0 && Post.payload["color"] != "blue" || Post.extra.hasType(.list)) {
            ((Self.number(age($0)) ?? -1) >= 0 && !Self.isNil($0.payload["color"]) && $0.payload["color"] != .string("blue"))
                || { if case .list? = $0.extra { return true } else { return false } }($0)
        }
    }

    @Test func exactIntegerAgainstDoubleComparison() {
        #expect(FlexLeaf.compare(Int64.max, 9_223_372_036_854_775_807.0) == -1)   // the double is 2^63
        #expect(FlexLeaf.compare(9_007_199_254_740_993, 9_007_199_254_740_992.0) == 1)   // 2^53 + 1 > 2^53
        #expect(FlexLeaf.compare(3, 3.0) == 0 && FlexLeaf.compare(3, 3.5) == -1 && FlexLeaf.compare(-3, -3.5) == 1)
        #expect(FlexLeaf.compare(Int64.min, -9_223_372_036_854_775_808.0) == 0 && FlexLeaf.compare(0, .nan) == nil)
        // Conditions order an integer against a double through it, both ways round.
        #expect(FlexLeaf.order(.integer(9_007_199_254_740_993), .double(9_007_199_254_740_992)) == 1)
        #expect(FlexLeaf.order(.double(9_007_199_254_740_992), .integer(9_007_199_254_740_993)) == -1)
    }

    @Test func misusedFlexConditionsAreRefused() throws {
        let store = try Store(directoryPath: "memory:flex-refused", model: cellarModel())
        let box = store.box(for: Post.self)
        #expect(throws: CellarError.self) { try box.query { Post.payload.containsAny([1]) }.build() }
        #expect(throws: CellarError.self) { try box.query { Post.payload["a"].startsWith("") && Post.payload.count > 1 }.build() }
        #expect(throws: CellarError.self) { try box.query { Post.title.hasType(.string) }.build() }
        #expect(throws: CellarError.self) { try box.query { Post.attributes["x"].hasType(.string) }.build() }
        #expect(throws: CellarError.self) { try box.query().ordered(by: Post.payload).build() }
    }
}
