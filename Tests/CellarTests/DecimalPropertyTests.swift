@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// Decimal properties (the generated `Device.price`, indexed, and `Device.balance`, optional): the
/// closed set of types, exact storage, every condition and order against filtering in memory,
/// the index, property queries, text, corrupt records.
@Suite struct DecimalPropertyTests {
    /// Decimals a Double cannot hold, equal ones of different scale, the extremes, NaN.
    static let pool: [Decimal] = [
        "-340282366920938463463374607431768211455", "-1e20", "-12.5", "-0.001", "0", "1e-128", "0.001", "0.1", "0.10",
        "1", "1.5", "1.50", "2", "10", "12.345678901234567890123456789012345678", "1e20", "10e127",
        "340282366920938463463374607431768211455",
    ].map { Decimal(string: $0)! } + [.nan]

    /// The order conditions and sorting use: NaN before every number, equal to itself.
    static func order(_ a: Decimal, _ b: Decimal) -> Int {
        switch (a.isNaN, b.isNaN) {
        case (true, true): 0
        case (true, false): -1
        case (false, true): 1
        default: a == b ? 0 : a < b ? -1 : 1
        }
    }

    @Test func everyTypeCodeHasOneKnownCaseAndBack() {
        var known: [Int] = []
        for code in 0..<4_200 {
            let type = PropertyType(rawValue: code)
            guard let kind = type.known else {
                #expect(!type.isSupported && type.fixedWidth == nil, "\(code)")
                continue
            }
            known.append(code)
            #expect(kind.code == type && type.isSupported && type.description == kind.description, "\(code)")
            #expect(!type.description.hasPrefix("type "), "\(code)")
        }
        // ObjectBox's scalars and vectors (not CharVector, 25), Cellar's extensions, and one list,
        // set and map per collection element.
        let scalars = Array(1...13) + [22, 23, 24] + Array(26...32) + [100, 101, 102, 103]
        #expect(known.filter { $0 < 1000 } == scalars)
        let elements = [1, 2, 3, 5, 6, 7, 8, 9, 10, 12, 23, 100]
        #expect(known.filter { $0 >= 1000 } == [1002, 1023, 1100, 1101] + elements.map { 2000 + $0 } + elements.map { 3000 + $0 })
        #expect(PropertyType.decimal.rawValue == 103 && PropertyType.decimal.description == "Decimal"
                && PropertyType.decimal.fixedWidth == DecimalEncoding.width)
        #expect(PropertyType.list(of: .decimal) == nil, "decimals are no collection elements yet")
        #expect(PropertyType.longVector.description == "LongVector" && PropertyType.list(of: .uuid)!.description == "UUIDList")
    }

    @Test func aDecimalIsStoredExactlyAndReadBack() throws {
        let store = try Store(directoryPath: "memory:decimal-exact", model: cellarModel())
        let box = store.box(for: Device.self)
        let devices = Self.pool.map { price -> Device in
            let device = Device()
            device.price = price
            device.balance = price.isNaN ? nil : -price
            return device
        }
        try box.put(devices)
        for (device, price) in zip(try box.all(), Self.pool) {
            #expect(device.price.isNaN ? price.isNaN : device.price == price)
            #expect(DecimalText.text(device.price) == DecimalText.text(price))
            #expect(device.fee == Decimal(string: "0.1")!, "the initial value, written with the object")
        }
        #expect(try box.get(devices[7].id)?.price == Decimal(string: "0.1")!, "0.1 is not 0.1000000000000000055…")
        #expect(DecimalText.text(try #require(box.get(devices[0].id)?.balance)) == "340282366920938463463374607431768211455")
    }

    /// One random condition on `price` (indexed) or `balance`, and the predicate it stands for.
    static func randomCondition(_ rng: inout SplitMix64) -> RandomConditions.Drawn<Device> {
        let onPrice = Bool.random(using: &rng)
        let property = onPrice ? Device.price : Device.balance
        let value: (Device) -> Decimal? = onPrice ? { $0.price } : { $0.balance }
        let o = pool.randomElement(using: &rng)!
        let p = pool.randomElement(using: &rng)!
        let set = [o, pool.randomElement(using: &rng)!, pool.randomElement(using: &rng)!]
        let whole = Int.random(in: -3...12, using: &rng)
        let ops: [(String, QueryCondition<Device>, (Decimal) -> Bool)] = [
            ("==", property == o, { order($0, o) == 0 }), ("!=", property != o, { order($0, o) != 0 }),
            ("<", property < o, { order($0, o) < 0 }), ("<=", property <= o, { order($0, o) <= 0 }),
            (">", property > o, { order($0, o) > 0 }), (">=", property >= o, { order($0, o) >= 0 }),
            ("isBetween", property.isBetween(o, and: p), { order($0, o) >= 0 && order($0, p) <= 0 }),
            ("isIn", property.isIn(set), { v in set.contains { order(v, $0) == 0 } }),
            ("isNotIn", property.isNotIn(set), { v in !set.contains { order(v, $0) == 0 } }),
            ("< integer", property < whole, { order($0, Decimal(whole)) < 0 }),
            ("== integer", property == whole, { order($0, Decimal(whole)) == 0 }),
        ]
        let pick = Int.random(in: 0..<(ops.count + 2), using: &rng)
        if pick >= ops.count {
            let isNil = pick == ops.count
            return (isNil ? property.isNil() : property.isNotNil(), { (value($0) == nil) == isNil }, "\(property) \(isNil ? "isNil" : "isNotNil")")
        }
        let (name, condition, test) = ops[pick]
        return (condition, { value($0).map(test) ?? false }, "\(property) \(name) \(o) \(p) \(set) \(whole)")
    }

    @Test func randomQueriesMatchFilteringInMemory() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let store = try Store(directoryPath: "memory:decimal-queries", model: cellarModel())
        let box = store.box(for: Device.self)
        var model: [Id: Device] = [:]
        func randomDecimal(_ rng: inout SplitMix64) -> Decimal {
            if Int.random(in: 0..<3, using: &rng) > 0 { return Self.pool.randomElement(using: &rng)! }
            return Decimal(string: "\(Int.random(in: -999...999, using: &rng)).\(Int.random(in: 0...99, using: &rng))")!
        }
        for round in 0..<6 {
            try RandomConditions.randomWrites(store, box, model: &model, rng: &rng, make: { rng, _ in
                let device = Device()
                device.price = randomDecimal(&rng)
                device.balance = Bool.random(using: &rng) ? nil : randomDecimal(&rng)
                return device
            }, change: { device, rng, _ in
                device.price = randomDecimal(&rng)
                device.balance = Bool.random(using: &rng) ? nil : randomDecimal(&rng)
            })
            for query in 0..<40 {
                let (condition, matches, text) = RandomConditions.oneOrTwo(&rng, Self.randomCondition)
                let context = "seed \(seed), round \(round), query \(query): \(text)"
                let expected = model.values.filter(matches).map(\.id).sorted()
                let built = try box.query { condition }.build()
                #expect(try built.findIds().map(\.value) == expected, "\(context)")
                #expect(try built.count() == expected.count, "\(context)")
                let descending = Bool.random(using: &rng)
                let byPrice = Bool.random(using: &rng)
                let ordered = try box.query { condition }.ordered(by: byPrice ? Device.price : Device.balance, flags: descending ? .descending : [])
                    .build().find()
                let sorted = RandomConditions.sorted(model.values.filter(matches), by: { byPrice ? $0.price : $0.balance }, id: \.id,
                                                     descending: descending, order: Self.order)
                #expect(ordered.map(\.id) == sorted.map(\.id), "\(context) ordered by \(byPrice ? "price" : "balance"), descending \(descending)")
            }
        }
        // Property queries: the values, the extremes in the numbers' order, the exact sum.
        let all = try box.query().build()
        let balances = model.values.sorted { $0.id < $1.id }.compactMap(\.balance)
        #expect(try all.property(Device.balance).find(Decimal.self).map(DecimalText.text) == balances.map(DecimalText.text))
        #expect(try all.property(Device.balance).min(Decimal.self).map(DecimalText.text)
                == balances.min { Self.order($0, $1) < 0 }.map(DecimalText.text))
        #expect(try all.property(Device.balance).max(Decimal.self).map(DecimalText.text)
                == balances.max { Self.order($0, $1) < 0 }.map(DecimalText.text))
        let finite = try box.query { Device.balance > Decimal(-1_000_000) && Device.balance < Decimal(1_000_000) }.build()
        let sum = model.values.sorted { $0.id < $1.id }.compactMap(\.balance).filter { !$0.isNaN && $0 > -1_000_000 && $0 < 1_000_000 }.reduce(Decimal(0), +)
        #expect(try finite.property(Device.balance).sumDecimal() == sum)
        #expect(throws: CellarError.self) { try all.property(Device.balance).sum() }
    }

    @Test func theIndexServesComparisonsAndEqualValuesOfAnotherScale() throws {
        let store = try Store(directoryPath: "memory:decimal-index", model: cellarModel())
        let box = store.box(for: Device.self)
        let devices = Self.pool.map { price -> Device in
            let device = Device()
            device.price = price
            return device
        }
        try box.put(devices)
        // `price` reads 0 in records written before it existed (its initial value): a condition 0
        // meets is answered by a scan, the others by the index.
        let queries: [(QueryCondition<Device>, Bool, (Decimal) -> Bool)] = [
            (Device.price == Decimal(string: "1.500")!, true, { $0 == 1.5 }),
            (Device.price < 1, false, { !$0.isNaN && $0 < 1 || $0.isNaN }),
            (Device.price < -1, true, { !$0.isNaN && $0 < -1 || $0.isNaN }),
            (Device.price >= Decimal(string: "0.1")!, true, { !$0.isNaN && $0 >= Decimal(string: "0.1")! }),
            (Device.price.isBetween(Decimal(string: "-12.5")!, and: 2), false, { !$0.isNaN && $0 >= -12.5 && $0 <= 2 }),
            (Device.price.isBetween(Decimal(string: "0.001")!, and: 2), true, { !$0.isNaN && $0 >= Decimal(string: "0.001")! && $0 <= 2 }),
            (Device.price.isIn([Decimal(string: "0.10")!, 10]), true, { !$0.isNaN && ($0 == Decimal(string: "0.1")! || $0 == 10) }),
        ]
        for (condition, indexed, test) in queries {
            let query = try box.query { condition }.build()
            let usesIndex = if case .index = try query.compiled.plan.source { true } else { false }
            #expect(usesIndex == indexed, "\(condition)")
            #expect(try query.findIds().map(\.value) == devices.filter { test($0.price) }.map(\.id), "\(condition)")
        }
        // Conditions a decimal has no meaning for, and inexact operands, are refused when built.
        #expect(throws: CellarError.self) { try box.query { Device.price == 1.5 }.build() }
        #expect(throws: CellarError.self) { try box.query { Device.price == "1.5" }.build() }
    }

    @Test func textRoundTripsAndRefusesWhatADecimalCannotHoldExactly() {
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        for _ in 0..<2_000 {
            let digits = (0..<Int.random(in: 1...38, using: &rng)).map { _ in String(Int.random(in: 0...9, using: &rng)) }.joined()
            let text = (Bool.random(using: &rng) ? "-" : "") + digits + "e" + String(Int.random(in: -100...90, using: &rng))
            guard let decimal = Decimal(string: text) else { continue }
            let written = DecimalText.text(decimal)
            #expect(DecimalText.parse(written) == decimal, "\(text) → \(written)")
            #expect(DecimalText.parse(text) == decimal, "\(text)")
        }
        #expect(DecimalText.text(Decimal(string: "12.50")!) == "12.5" && DecimalText.text(Decimal(string: "-0.001")!) == "-0.001")
        #expect(DecimalText.text(Decimal(string: "1200")!) == "1200" && DecimalText.text(Decimal(string: "1e45")!) == "1E+45")
        #expect(DecimalText.text(Decimal(string: "1.25e-30")!) == "1.25E-30" && DecimalText.text(.nan) == "NaN")
        #expect(DecimalText.parse("1e128") == Decimal(string: "10e127")!, "above the exponent's range, while the digits have room")
        #expect(DecimalText.parse("NaN")?.isNaN == true && DecimalText.parse("-0") == 0 && DecimalText.parse("+1.") == 1)
        for refused in ["", "-", ".", "1,5", "12abc", "1e", "1e+", "1.2.3", " 1", "1 ", "nan", "Infinity", "0x10",
                        "1234567890123456789012345678901234567891",   // 40 digits: rounded by Decimal(string:)
                        "340282366920938463463374607431768211456",    // 2^128
                        "1e-129", "1e200", "1e9999999"] {
            #expect(DecimalText.parse(refused) == nil, "\(refused)")
        }
    }

    @Test func aDumpWritesTheExactTextAndAnImportReadsIt() throws {
        let model = cellarModel()
        let entity = try #require(model.entity(named: "Device"))
        let price = try #require(entity.properties.first { $0.name == "price" })
        let builder = RecordBuilder()
        builder.begin(slotCount: 7)
        builder.add(Decimal(string: "-340282366920938463463374607431768211455")!, slot: 4)
        builder.add(Decimal.nan, slot: 5)
        let bytes = Array(builder.bytes)
        try bytes.withUnsafeBytes { raw in
            let reader = try RecordReader(raw)
            let json = try ObjectDump.value(of: price, slot: 4, in: reader, model: model, style: .exact)
            #expect(json == .number("-340282366920938463463374607431768211455"))
            let members = try ObjectDump.properties(of: reader, entity: entity, model: model, style: .exact)
            #expect(members.first { $0.name == "balance" }?.value == .string("NaN"))
        }
    }

    @Test func aCorruptDecimalIsFileCorrupt() throws {
        let store = try Store(directoryPath: "memory:decimal-corrupt", model: cellarModel())
        let box = store.box(for: Device.self)
        let device = Device()
        device.price = 5
        let id = try box.put(device)
        let key = withUnsafeBytes(of: id.value.bigEndian) { Array($0) }
        let good = try store.engine.read { txn in Array(try txn.get(txn.tree("e5")!, key: key)!) }
        // The price's 23 bytes: a class byte no decimal has, then a digit above 9.
        let at = try good.withUnsafeBytes { raw in try #require(try RecordReader(raw).offset(4, size: DecimalEncoding.width)) }
        for (offset, byte) in [(0, UInt8(9)), (3, UInt8(0xFA))] {
            var bad = good
            bad[at + offset] = byte
            try store.engine.write { txn in try txn.put(txn.tree("e5")!, key: key, value: bad) }
            do { _ = try box.get(id); Issue.record("a corrupt decimal read") } catch CellarError.Code.fileCorrupt {}
            do { _ = try box.query { Device.balance.isNil() && Device.price > 1 }.build().find(); Issue.record("a corrupt decimal matched") }
            catch CellarError.Code.fileCorrupt {}
        }
    }

    @Test func compactionKeepsTheDecimalWhenItDropsARetiredField() throws {
        let builder = RecordBuilder()
        builder.begin(slotCount: 3)
        builder.add(Int64(7), slot: 0)           // retired
        builder.add(Decimal(string: "-12.5")!, slot: 1)
        builder.add(Optional(Decimal(string: "0.1")!), slot: 2)
        let bytes = Array(builder.bytes)
        let rewritten = try bytes.withUnsafeBytes { raw in
            try RecordReader(raw).withoutRetiredFields([nil, .decimal, .decimal], into: RecordBuilder())
        }
        let kept = try #require(rewritten)
        #expect(kept.count == bytes.count - 8)
        try kept.withUnsafeBytes { raw in
            let reader = try RecordReader(raw)
            try reader.verify(types: [nil, .decimal, .decimal])
            #expect(try reader.read(Int64.self, slot: 0) == nil && reader.decimal(slot: 1) == -12.5 && reader.decimal(slot: 2) == Decimal(string: "0.1")!)
        }
    }
}
