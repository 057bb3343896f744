@testable import CellarStorage
import CellarTestSupport
import Testing

/// Debug builds read UInt16, UInt32 and UInt64 through overloads of their own (`memcpy`, no type
/// metadata looked up); release builds through the generic loader. Both must read the same
/// value at every offset, or a debug build tests a different store than the one that ships.
@Suite("little-endian loads")
struct LittleEndianTests {
    /// The generic loader, whatever overloads exist: called from a generic context.
    static func generic<T: FixedWidthInteger>(_ type: T.Type, _ pointer: UnsafeRawPointer, at offset: Int) -> T {
        pointer.loadLE(T.self, at: offset)
    }

    @Test("each width reads what the generic loader reads, at every offset, from every kind of pointer")
    func overloadsAgreeWithTheGenericLoader() {
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        let bytes = (0..<64).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        bytes.withUnsafeBytes { buffer in
            let pointer = buffer.baseAddress!
            let mutable = UnsafeMutableRawPointer(mutating: pointer)
            for offset in 0...(64 - 8) {
                #expect(pointer.loadLE(UInt16.self, at: offset) == Self.generic(UInt16.self, pointer, at: offset))
                #expect(pointer.loadLE(UInt32.self, at: offset) == Self.generic(UInt32.self, pointer, at: offset))
                #expect(pointer.loadLE(UInt64.self, at: offset) == Self.generic(UInt64.self, pointer, at: offset))
                #expect(buffer.loadLE(UInt32.self, at: offset) == Self.generic(UInt32.self, pointer, at: offset))
                #expect(mutable.loadLE(UInt64.self, at: offset) == Self.generic(UInt64.self, pointer, at: offset))
                // Little-endian whatever the machine: the first byte is the lowest.
                let expected = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
                #expect(pointer.loadLE(UInt32.self, at: offset) == expected)
            }
        }
    }
}
