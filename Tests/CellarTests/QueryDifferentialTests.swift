@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarTestSupport
import Foundation
import Testing

/// Random objects and random queries (seeded; `CELLAR_SEED` repeats a run) compared with
/// filtering and sorting an in-memory copy: conditions of every kind on every property type,
/// nils, `&&`/`||` nesting, orders with every flag, offset and limit, counts, ids, property
/// queries, `remove`, with puts, updates and removes between queries, reopens, and the indexes
/// dropped and built again at open.
@Suite struct QueryDifferentialTests {
    static let titles = ["", "apple", "Apple", "APPLE pie", "apricot", "banana", "Banana split", "äpfel", "Äpfel", "zeta", "a\u{0}b", "ab"]
    static let texts: [String?] = [nil, "red", "Red", "green", "blue", "ß", "", "redder"]
    static let scores: [Int32?] = [nil, Int32.min, -7, -1, 0, 1, 2, 7, 42, Int32.max]
    static let amounts: [Double?] = [nil, -1.5, -0.0, 0, 0.25, 1, 3.75, .infinity, -.infinity, .nan]
    static let ranks: [UInt64] = [0, 1, 2, 99, UInt64(Int64.max), UInt64(Int64.max) + 1, UInt64.max]
    static let blobs: [[UInt8]?] = [nil, [], [0], [0, 1], [1], [255, 0], [1, 2, 3]]

    /// The in-memory copy of one object.
    struct Item: Equatable {
        var id: Id
        var title: String
        var text: String?
        var score: Int32?
        var amount: Double?
        var flag: Bool
        var created: Int64   // ms
        var blob: [UInt8]?
        var author: Id
        var rank: UInt64

        static func == (a: Item, b: Item) -> Bool {
            a.id == b.id && a.title == b.title && a.text == b.text && a.score == b.score
                && (a.amount == b.amount || (a.amount?.isNaN ?? false) && (b.amount?.isNaN ?? false))
                && a.flag == b.flag && a.created == b.created && a.blob == b.blob && a.author == b.author && a.rank == b.rank
        }

        init(_ item: QItem) {
            id = item.id; title = item.title; text = item.text; score = item.score; amount = item.amount; flag = item.flag
            created = Int64((item.created.timeIntervalSince1970 * 1000).rounded()); blob = item.blob
            author = item.author.targetId; rank = item.rank
        }

        /// A property's value as the query compares it (nil: absent).
        func value(_ property: Int) -> Value? {
            switch property {
            case 1: .unsigned(id)
            case 2: .bytes(Array(title.utf8), string: true)
            case 3: text.map { .bytes(Array($0.utf8), string: true) }
            case 4: score.map { .signed(Int64($0)) }
            case 5: amount.map { .double($0) }
            case 6: .signed(flag ? 1 : 0)
            case 7: .signed(created)
            case 8: blob.map { .bytes($0, string: false) }
            case 9: .unsigned(author)
            default: .unsigned(rank)
            }
        }
    }

    enum Value {
        case signed(Int64)
        case unsigned(UInt64)
        case double(Double)
        case bytes([UInt8], string: Bool)
    }

    /// A random condition and the predicate it stands for.
    struct Condition {
        let condition: QueryCondition<QItem>
        let matches: (Item) -> Bool
        let text: String
    }

    static let properties: [Property<QItem>] = [QItem.id, QItem.title, QItem.text, QItem.score, QItem.amount, QItem.flag,
                                                QItem.created, QItem.blob, QItem.author, QItem.rank]

    static func fold(_ bytes: [UInt8]) -> [UInt8] { Array(String(decoding: bytes, as: UTF8.self).lowercased().utf8) }

    static func order(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.lexicographicallyPrecedes(b) ? -1 : a == b ? 0 : 1
    }

    static func randomLeaf(_ rng: inout SplitMix64, authors: [Id]) -> Condition {
        let property = Int.random(in: 1...10, using: &rng)
        let p = properties[property - 1]
        let op = Int.random(in: 0..<10, using: &rng)
        if op == 9 {
            let isNil = Bool.random(using: &rng)
            return Condition(condition: isNil ? p.isNil() : p.isNotNil(), matches: { ($0.value(property) == nil) == isNil },
                             text: "\(p) \(isNil ? "isNil" : "isNotNil")")
        }
        switch property {
        case 2, 3:
            let operand = Array((titles + texts.compactMap { $0 }).randomElement(using: &rng)!.prefix(Int.random(in: 0...6, using: &rng)))
            let string = String(operand)
            let caseSensitive = Bool.random(using: &rng)
            let o = Array(string.utf8)
            let prep: ([UInt8]) -> [UInt8] = { caseSensitive ? $0 : fold($0) }
            let ops: [(String, QueryCondition<QItem>, ([UInt8]) -> Bool)] = [
                ("==", p.isEqual(to: string, caseSensitive: caseSensitive), { prep($0) == prep(o) }),
                ("!=", p.isNotEqual(to: string, caseSensitive: caseSensitive), { prep($0) != prep(o) }),
                ("<", p.isLessThan(string, caseSensitive: caseSensitive), { order(prep($0), prep(o)) < 0 }),
                ("<=", p.isLessThanOrEqual(string, caseSensitive: caseSensitive), { order(prep($0), prep(o)) <= 0 }),
                (">", p.isGreaterThan(string, caseSensitive: caseSensitive), { order(prep($0), prep(o)) > 0 }),
                (">=", p.isGreaterThanOrEqual(string, caseSensitive: caseSensitive), { order(prep($0), prep(o)) >= 0 }),
                ("startsWith", p.startsWith(string, caseSensitive: caseSensitive), { prep($0).starts(with: prep(o)) }),
                ("endsWith", p.endsWith(string, caseSensitive: caseSensitive), { prep($0).reversed().starts(with: prep(o).reversed()) }),
                ("contains", p.contains(string, caseSensitive: caseSensitive), {
                    let (h, n) = (prep($0), prep(o))
                    return n.isEmpty || (0...max(0, h.count - n.count)).contains { h.count >= n.count && Array(h[$0..<($0 + n.count)]) == n }
                }),
                ("isIn", p.isIn([string, "red", "apple"], caseSensitive: caseSensitive), { v in [o, Array("red".utf8), Array("apple".utf8)].contains { prep($0) == prep(v) } }),
            ]
            let (name, condition, test) = ops[op % ops.count]
            return Condition(condition: condition, matches: { item in
                guard case .bytes(let v, _)? = item.value(property) else { return false }
                return test(v)
            }, text: "\(p) \(name) \"\(string)\" cs=\(caseSensitive)")
        case 8:
            let o = blobs.compactMap { $0 }.randomElement(using: &rng)!
            let ops: [(String, QueryCondition<QItem>, ([UInt8]) -> Bool)] = [
                ("==", p == o, { $0 == o }), ("!=", p != o, { $0 != o }), ("<", p < o, { order($0, o) < 0 }),
                ("<=", p <= o, { order($0, o) <= 0 }), (">", p > o, { order($0, o) > 0 }), (">=", p >= o, { order($0, o) >= 0 }),
            ]
            let (name, condition, test) = ops[op % ops.count]
            return Condition(condition: condition, matches: { item in
                guard case .bytes(let v, _)? = item.value(property) else { return false }
                return test(v)
            }, text: "\(p) \(name) \(o)")
        case 5:
            let o = amounts.compactMap { $0 }.filter { !$0.isNaN }.randomElement(using: &rng)!
            let o2 = amounts.compactMap { $0 }.filter { !$0.isNaN }.randomElement(using: &rng)!
            let ops: [(String, QueryCondition<QItem>, (Double) -> Bool)] = [
                ("==", p == o, { $0 == o }), ("!=", p != o, { $0 != o }), ("<", p < o, { $0 < o }),
                ("<=", p <= o, { $0 <= o }), (">", p > o, { $0 > o }), (">=", p >= o, { $0 >= o }),
                ("between", p.isBetween(o, o2), { o <= $0 && $0 <= o2 }),
                ("tolerance", p.isEqual(to: o, tolerance: 0.5), { o - 0.5 <= $0 && $0 <= o + 0.5 }),
            ]
            let (name, condition, test) = ops[op % ops.count]
            return Condition(condition: condition, matches: { item in
                guard case .double(let v)? = item.value(property) else { return false }
                return test(v)
            }, text: "\(p) \(name) \(o) \(o2)")
        case 1, 9, 10:
            let pool: [UInt64] = property == 10 ? ranks : property == 9 ? [0] + authors : (0...12).map { UInt64($0) }
            let o = pool.randomElement(using: &rng)!
            let o2 = pool.randomElement(using: &rng)!
            let set = [o, o2, pool.randomElement(using: &rng)!]
            let ops: [(String, QueryCondition<QItem>, (UInt64) -> Bool)] = [
                ("==", p == o, { $0 == o }), ("!=", p != o, { $0 != o }), ("<", p < o, { $0 < o }),
                ("<=", p <= o, { $0 <= o }), (">", p > o, { $0 > o }), (">=", p >= o, { $0 >= o }),
                ("between", p.isBetween(o, o2), { o <= $0 && $0 <= o2 }),
                ("isIn", p.isIn(set), { set.contains($0) }), ("isNotIn", p.isNotIn(set), { !set.contains($0) }),
            ]
            let (name, condition, test) = ops[op % ops.count]
            return Condition(condition: condition, matches: { item in
                guard case .unsigned(let v)? = item.value(property) else { return false }
                return test(v)
            }, text: "\(p) \(name) \(o) \(o2) \(set)")
        default:   // 4 score, 6 flag, 7 created: signed
            let pool: [Int64] = property == 4 ? scores.compactMap { $0.map(Int64.init) } : property == 6 ? [0, 1] : [0, 1_000, 5_000, -3_000]
            let o = pool.randomElement(using: &rng)!
            let o2 = pool.randomElement(using: &rng)!
            let set = [o, o2, pool.randomElement(using: &rng)!]
            if property == 7 && Bool.random(using: &rng) {
                // Dates compare as dates.
                let date = Date(timeIntervalSince1970: Double(o) / 1000)
                return Condition(condition: p > date, matches: { item in
                    guard case .signed(let v)? = item.value(property) else { return false }
                    return v > o
                }, text: "\(p) > date \(o)")
            }
            if property == 6 && Bool.random(using: &rng) {
                return Condition(condition: p == (o == 1), matches: { item in
                    guard case .signed(let v)? = item.value(property) else { return false }
                    return v == o
                }, text: "\(p) == \(o == 1)")
            }
            let ops: [(String, QueryCondition<QItem>, (Int64) -> Bool)] = [
                ("==", p == o, { $0 == o }), ("!=", p != o, { $0 != o }), ("<", p < o, { $0 < o }),
                ("<=", p <= o, { $0 <= o }), (">", p > o, { $0 > o }), (">=", p >= o, { $0 >= o }),
                ("between", p.isBetween(o, o2), { o <= $0 && $0 <= o2 }),
                ("isIn", p.isIn(set), { set.contains($0) }), ("isNotIn", p.isNotIn(set), { !set.contains($0) }),
            ]
            let (name, condition, test) = ops[op % ops.count]
            return Condition(condition: condition, matches: { item in
                guard case .signed(let v)? = item.value(property) else { return false }
                return test(v)
            }, text: "\(p) \(name) \(o) \(o2) \(set)")
        }
    }

    static func randomCondition(_ rng: inout SplitMix64, depth: Int, authors: [Id]) -> Condition {
        guard depth > 0, Int.random(in: 0..<3, using: &rng) == 0 else { return randomLeaf(&rng, authors: authors) }
        let a = randomCondition(&rng, depth: depth - 1, authors: authors)
        let b = randomCondition(&rng, depth: depth - 1, authors: authors)
        if Bool.random(using: &rng) {
            return Condition(condition: a.condition && b.condition, matches: { a.matches($0) && b.matches($0) }, text: "(\(a.text) && \(b.text))")
        }
        return Condition(condition: a.condition || b.condition, matches: { a.matches($0) || b.matches($0) }, text: "(\(a.text) || \(b.text))")
    }

    /// Sorts the model the way `ordered(by:flags:)` is documented to.
    static func sorted(_ items: [Item], by orders: [(Int, OrderFlags)]) -> [Item] {
        func key(_ item: Item, _ property: Int, _ flags: OrderFlags) -> Value? {
            guard let value = item.value(property) else {
                guard flags.contains(.nullsAsZero) else { return nil }
                switch property {
                case 2, 3, 8: return .bytes([], string: property != 8)
                case 5: return .double(0)
                default: return .signed(0)
                }
            }
            switch value {
            case .bytes(let b, true) where !flags.contains(.caseSensitive): return .bytes(fold(b), string: true)
            case .signed(let v) where flags.contains(.unsigned): return .unsigned(UInt64(bitPattern: v))
            default: return value
            }
        }
        func less(_ x: Value, _ y: Value) -> Bool? {
            switch (x, y) {
            case (.signed(let a), .signed(let b)): return a == b ? nil : a < b
            case (.signed(let a), .unsigned(let b)): return UInt64(bitPattern: a) == b ? nil : UInt64(bitPattern: a) < b
            case (.unsigned(let a), .signed(let b)): return a == UInt64(bitPattern: b) ? nil : a < UInt64(bitPattern: b)
            case (.unsigned(let a), .unsigned(let b)): return a == b ? nil : a < b
            case (.double(let a), .double(let b)):
                if a.isNaN && b.isNaN { return nil }
                if a.isNaN { return false }
                if b.isNaN { return true }
                return a == b ? nil : a < b
            case (.bytes(let a, _), .bytes(let b, _)): return a == b ? nil : a.lexicographicallyPrecedes(b)
            default: return nil
            }
        }
        return items.sorted { a, b in
            for (property, flags) in orders {
                switch (key(a, property, flags), key(b, property, flags)) {
                case (nil, nil): continue
                case (nil, _): return !flags.contains(.nullsLast)
                case (_, nil): return flags.contains(.nullsLast)
                case (let x?, let y?):
                    guard let isLess = less(x, y) else { continue }
                    return flags.contains(.descending) ? !isLess : isLess
                }
            }
            return a.id < b.id
        }
    }

    static func randomItem(_ rng: inout SplitMix64, into item: QItem, authors: [Id]) {
        item.title = titles.randomElement(using: &rng)!
        item.text = texts.randomElement(using: &rng)!
        item.score = scores.randomElement(using: &rng)!
        item.amount = amounts.randomElement(using: &rng)!
        item.flag = Bool.random(using: &rng)
        item.created = Date(timeIntervalSince1970: Double([0, 1, 5, -3, 2].randomElement(using: &rng)!))
        item.blob = blobs.randomElement(using: &rng)!
        item.author = ToOne(targetId: ([0] + authors).randomElement(using: &rng)!)
        item.rank = ranks.randomElement(using: &rng)!
    }

    @Test func randomQueriesMatchFilteringInMemory() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let dir = TestDirectory("query-differential")
        defer { dir.remove() }
        var store = try Store(directoryPath: dir.path, model: queryModel(), options: StoreOptions(durability: .none))
        let authorIds = try store.box(for: QAuthor.self).put((1...4).map { QAuthor("author \($0)") }).map(\.value)
        var model: [Id: Item] = [:]
        var queries = 0
        var generation: UInt32 = 0
        for round in 0..<12 {
            let box = store.box(for: QItem.self)
            // Changes: inserts, updates of random objects, removes.
            try store.runInTransaction {
                for _ in 0..<Int.random(in: 20...80, using: &rng) {
                    let choice = Int.random(in: 0..<10, using: &rng)
                    if choice < 6 || model.isEmpty {
                        let item = QItem()
                        Self.randomItem(&rng, into: item, authors: authorIds)
                        try box.put(item)
                        model[item.id] = Item(item)
                    } else if choice < 9 {
                        let id = model.keys.sorted().randomElement(using: &rng)!
                        let item = try #require(try box.get(id))
                        Self.randomItem(&rng, into: item, authors: authorIds)
                        try box.put(item)
                        model[id] = Item(item)
                    } else {
                        let id = model.keys.sorted().randomElement(using: &rng)!
                        try box.remove(id)
                        model[id] = nil
                    }
                }
            }
            for _ in 0..<40 {
                queries += 1
                let condition = Self.randomCondition(&rng, depth: 3, authors: authorIds)
                let context = "seed \(seed), round \(round), query \(queries): \(condition.text)"
                var builder = box.query { condition.condition }
                var orders: [(Int, OrderFlags)] = []
                for _ in 0..<Int.random(in: 0...2, using: &rng) {
                    let property = Int.random(in: 1...10, using: &rng)
                    let flags = OrderFlags(rawValue: UInt32.random(in: 0..<32, using: &rng))
                    orders.append((property, flags))
                    builder = builder.ordered(by: Self.properties[property - 1], flags: flags)
                }
                let query = try builder.build()
                let expected = Self.sorted(model.values.filter(condition.matches), by: orders)
                let found = try query.find().map(Item.init)
                #expect(found == expected, "\(context) orders \(orders)")
                #expect(try query.count() == expected.count, "\(context)")
                #expect(try query.findIds().map(\.value) == expected.map(\.id), "\(context)")
                let offset = Int.random(in: 0...5, using: &rng)
                let limit = Int.random(in: 0...6, using: &rng)
                let page = Array(expected.dropFirst(offset).prefix(limit))
                #expect(try query.find(offset: offset, limit: limit).map(Item.init) == page, "\(context) offset \(offset) limit \(limit)")
                #expect(try query.findFirst().map(Item.init) == expected.first, "\(context)")
                var visited: [Id] = []
                try query.visit { view in
                    visited.append(view.id)
                    let (title, score) = (try view.string(QItem.title), try view.integer(QItem.score))
                    #expect(title == model[view.id]?.title)
                    #expect(score == model[view.id]?.score.map(Int64.init))
                    return true
                }
                #expect(visited == expected.map(\.id), "\(context)")
                let scores = expected.compactMap(\.score).map(Int.init)
                #expect(try query.property(QItem.score).max(Int.self) == scores.max(), "\(context)")
                #expect(try query.property(QItem.score).min(Int.self) == scores.min(), "\(context)")
                #expect(try query.property(QItem.score).count() == scores.count, "\(context)")
                #expect(try query.property(QItem.score).distinct().count() == Set(scores).count, "\(context)")
                #expect(try query.property(QItem.score).sumInteger() == scores.reduce(0) { $0 + Int64($1) }, "\(context)")
                #expect(try query.property(QItem.title).find(String.self) == expected.map(\.title), "\(context)")
                #expect(try query.property(QItem.text).find(String.self, valueIfNil: "-") == expected.map { $0.text ?? "-" }, "\(context)")
            }
            // Sometimes remove through a query.
            if round % 4 == 1 {
                let condition = Self.randomLeaf(&rng, authors: authorIds)
                let removed = try box.query { condition.condition }.build().remove()
                let expected = model.values.filter(condition.matches)
                #expect(removed == expected.count, "seed \(seed): remove \(condition.text)")
                for item in expected { model[item.id] = nil }
                #expect(try box.count() == model.count, "seed \(seed)")
            }
            // Reopen: plainly, or without the indexes (dropped) and then with them (built again).
            if round % 3 == 2 {
                store.close()
                if round % 6 == 5 {
                    store = try Store(directoryPath: dir.path, model: queryModel(indexes: false, generation: generation),
                                      options: StoreOptions(durability: .none))
                    let box = store.box(for: QItem.self)
                    #expect(try box.query { QItem.rank == 0 }.build().count() == model.values.filter { $0.rank == 0 }.count)
                    store.close()
                    generation += 1
                }
                store = try Store(directoryPath: dir.path, model: queryModel(generation: generation), options: StoreOptions(durability: .none))
            }
        }
        #expect(queries == 480)
    }
}
