@testable import CellarStorage
import Testing

/// The log's checksum is XXH64 as docs/format.md says, not something like it: the values below
/// are the reference implementation's (libxxhash 0.8.1, `XXH64(bytes, count, seed)`) for inputs
/// of every length class the function treats apart (empty, 1–3, 4–7, 8–31 bytes, whole 32-byte
/// stripes and every kind of tail after them), with two seeds.
@Suite struct ChecksumTests {
    /// Byte i of the input: (31 i + 7) mod 256.
    static func input(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: 31 &* $0 &+ 7) } }

    static let reference: [(count: Int, seed: UInt64, hash: UInt64)] = [
        (0, 0x0000000000000000, 0xEF46DB3751D8E999),
        (1, 0x0000000000000000, 0xA96C7F0CE858BBB7),
        (3, 0x0000000000000000, 0x56E6957632A487F9),
        (4, 0x0000000000000000, 0xC60D15B1E3FF8F04),
        (5, 0x0000000000000000, 0x808815858624DD4E),
        (7, 0x0000000000000000, 0xAFBEFC3D6C6F9A8E),
        (8, 0x0000000000000000, 0x3DA5C7AA269683E0),
        (9, 0x0000000000000000, 0x4B17A9BA9E215C09),
        (12, 0x0000000000000000, 0x8FE8AB1C1FD0666E),
        (15, 0x0000000000000000, 0xAE2A37EB9357CAA7),
        (16, 0x0000000000000000, 0xA19AD429B02BC413),
        (31, 0x0000000000000000, 0x4A74F3A1A39AD4A1),
        (32, 0x0000000000000000, 0x8D57D6A4671CC43D),
        (33, 0x0000000000000000, 0x62C9FD21ED857664),
        (35, 0x0000000000000000, 0x85CBCF9E0D9CBECA),
        (39, 0x0000000000000000, 0x1789542489E59CC4),
        (40, 0x0000000000000000, 0x49B45332E280F187),
        (63, 0x0000000000000000, 0x5C320A0D2707057F),
        (64, 0x0000000000000000, 0x7BBABBC45729D17E),
        (100, 0x0000000000000000, 0xEFA0AD2D3E70C151),
        (1000, 0x0000000000000000, 0x99594F4828043D35),
        (4096, 0x0000000000000000, 0xE21174BE82DC78D9),
        (0, 0x9E3779B97F4A7C15, 0xC4349FC93C010000),
        (1, 0x9E3779B97F4A7C15, 0x585882422A6165E7),
        (3, 0x9E3779B97F4A7C15, 0x5ACB303E78133C22),
        (4, 0x9E3779B97F4A7C15, 0x7D51D5E2461732B3),
        (5, 0x9E3779B97F4A7C15, 0x7F8B72856A42BB63),
        (7, 0x9E3779B97F4A7C15, 0x2CE9ADEC2B2C8104),
        (8, 0x9E3779B97F4A7C15, 0x758848F033FA76A2),
        (9, 0x9E3779B97F4A7C15, 0xD4576CF554B7D929),
        (12, 0x9E3779B97F4A7C15, 0xEAA6D4D803D21FD7),
        (15, 0x9E3779B97F4A7C15, 0xA18D5C90D722CEE3),
        (16, 0x9E3779B97F4A7C15, 0xE3594F9058B426E7),
        (31, 0x9E3779B97F4A7C15, 0x8137041F5AF88413),
        (32, 0x9E3779B97F4A7C15, 0x184EBCF3745CD46C),
        (33, 0x9E3779B97F4A7C15, 0x52FAC3C981F3CC2E),
        (35, 0x9E3779B97F4A7C15, 0x04483606D3944CFB),
        (39, 0x9E3779B97F4A7C15, 0x5661126B7EFAF137),
        (40, 0x9E3779B97F4A7C15, 0x36758D31812C0E57),
        (63, 0x9E3779B97F4A7C15, 0x64EF99A2E94CC7BD),
        (64, 0x9E3779B97F4A7C15, 0xF7F22435FE1AB128),
        (100, 0x9E3779B97F4A7C15, 0xBC7AB33BE7528C18),
        (1000, 0x9E3779B97F4A7C15, 0xDA717F741F399F3F),
        (4096, 0x9E3779B97F4A7C15, 0xE4D8CED124DF0294),
    ]

    @Test("XXH64 of inputs of every length class equals the reference implementation's")
    func matchesReference() {
        for (count, seed, hash) in Self.reference {
            let got = Self.input(count).withUnsafeBytes { Checksum.xxh64($0, seed: seed) }
            #expect(got == hash, "count \(count), seed \(seed): \(String(got, radix: 16)) vs \(String(hash, radix: 16))")
        }
    }

    @Test("XXH64 of \"abc\" is the published 0x44BC2CF5AD770999")
    func publishedValue() {
        #expect(Array("abc".utf8).withUnsafeBytes { Checksum.xxh64($0) } == 0x44BC_2CF5_AD77_0999)
    }

    @Test("the hash of a slice does not read outside it")
    func slices() {
        let bytes = Self.input(200)
        for start in [0, 1, 3, 7] {
            for count in [0, 5, 33, 100] {
                let whole = Array(bytes[start..<(start + count)])
                let expected = whole.withUnsafeBytes { Checksum.xxh64($0, seed: 42) }
                let got = bytes.withUnsafeBytes { Checksum.xxh64(UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)]), seed: 42) }
                #expect(got == expected, "start \(start), count \(count)")
            }
        }
    }
}
