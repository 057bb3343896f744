@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Testing

/// A new object's index keys made from its record's bytes (`IndexedField.keyBits`, the path of
/// entities whose indexes are all on numbers) are the keys the general path makes from its values
/// (`IndexKey.part`): every numeric type, signed and unsigned, zero skipped or not, over edge and
/// random values.
@Suite struct FixedIndexKeyTests {
    @Test func keyBitsMatchTheGeneralPath() throws {
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        let types: [(PropertyType, PropertyFlags)] = [
            (.bool, []), (.byte, []), (.byte, .unsigned), (.short, []), (.short, .unsigned), (.char, []),
            (.int, []), (.int, .unsigned), (.long, []), (.long, .unsigned), (.float, []), (.double, []),
            (.date, []), (.dateNano, []), (.relation, .indexPartialSkipZero), (.long, .indexPartialSkipZero),
        ]
        let edges: [UInt64] = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF,
                               UInt64(Int64.max), 1 << 63, UInt64.max, 0x3F80_0000, 0x7FC0_0000, 0xFF80_0000,
                               (-0.0 as Double).bitPattern, Double.nan.bitPattern, Double.infinity.bitPattern]
        for (n, (type, extra)) in types.enumerated() {
            let model = ModelProperty(name: "p\(n)", id: IdUid(id: 2, uid: 77_000 + UInt64(n)), type: type,
                                      flags: PropertyFlags.indexed.union(extra), indexId: IdUid(id: 1, uid: 78_000 + UInt64(n)),
                                      relationTarget: type == .relation ? "T" : nil)
            let property = PropertySchema(model, entity: "E", indexOrdinal: 0)
            let field = IndexedField(property)
            #expect(field.hasFixedKey)
            let width = type.fixedWidth!
            let builder = RecordBuilder()
            for value in edges + (0..<300).map({ _ in rng.next() >> (rng.next() % 64) }) {
                var bits = value
                if type == .bool { bits &= 1 }
                builder.begin(slotCount: 2)
                switch width {
                case 1: builder.add(UInt8(truncatingIfNeeded: bits), slot: 1)
                case 2: builder.add(UInt16(truncatingIfNeeded: bits), slot: 1)
                case 4: builder.add(UInt32(truncatingIfNeeded: bits), slot: 1)
                default: builder.add(bits, slot: 1)
                }
                let reader = try RecordReader(builder.bytes)
                let value = try reader.value(of: property, id: 9)
                let expected: IndexKey.Part? = try value.flatMap { try IndexKey.part($0, index: property.index!, property: property) }
                let raw = try #require(try reader.rawValue(field))
                let got = field.keyBits(raw)
                switch expected {
                case nil: #expect(got == nil, "\(type) \(extra) \(bits)")
                case .fixed(let keyBits, let keyWidth)?:
                    #expect(keyWidth == 8 && got == keyBits, "\(type) \(extra) \(bits): \(String(describing: got)) != \(keyBits)")
                case .escaped?: Issue.record("a number with an escaped key")
                }
            }
        }
    }

    /// Strings, byte vectors and unique indexes go through the general path.
    @Test func onlyNumbersInIndexesThatAreNotUniqueHaveFixedKeys() {
        let cases: [(PropertyType, PropertyFlags, Bool)] = [
            (.string, [], false), (.string, .indexHash, false), (.byteVector, [], false),
            (.long, .unique, false), (.int, [], true),
        ]
        for (n, (type, extra, fixed)) in cases.enumerated() {
            let model = ModelProperty(name: "q\(n)", id: IdUid(id: 2, uid: 79_000 + UInt64(n)), type: type,
                                      flags: PropertyFlags.indexed.union(extra), indexId: IdUid(id: 1, uid: 79_500 + UInt64(n)))
            #expect(IndexedField(PropertySchema(model, entity: "E", indexOrdinal: 0)).hasFixedKey == fixed)
        }
    }
}
