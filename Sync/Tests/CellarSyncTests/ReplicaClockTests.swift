@_spi(Sync) import Cellar
import Foundation
import Testing

/// The last-writer-wins clock orders as its text does: the server compares the texts, the
/// store the clocks, and both must pick the same winner.
struct ReplicaClockTests {
    @Test func clocksOrderAsTheirTexts() throws {
        var devices = (0..<50).map { _ in UUID() }
        // UUIDs that differ only in one byte, early or late, and the extremes.
        devices += [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                    UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)),
                    UUID(uuid: (0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                    UUID(uuid: (0x0f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff)),
                    UUID(uuid: (0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))]
        let timestamps: [UInt64] = [0, 0xabc, .max]
        let clocks = devices.flatMap { device in timestamps.map { ReplicaClock(timestamp: HybridTimestamp(rawValue: $0), device: device) } }
        let texts = clocks.map(\.text)
        for (a, aText) in zip(clocks, texts) {
            #expect(aText.utf8.count == 32 && aText.utf8.allSatisfy { $0 < 0x80 })
            for (b, bText) in zip(clocks, texts) where (a < b) != (aText.utf8.lexicographicallyPrecedes(bText.utf8)) {
                Issue.record("\(a) < \(b) is \(a < b), their texts say otherwise")
            }
            #expect(ReplicaClock(text: aText) == a)
            // The description orders as well (it is what people read in logs).
            #expect(clocks.allSatisfy { ($0 < a) == ($0.description < a.description) })
        }
    }

    /// The text is base64 of the timestamp's and the UUID's bytes with the alphabet put in ASCII
    /// order (what the server's move from the older texts relies on): an example worked by hand.
    /// Texts that are not a clock's are refused.
    @Test func theTextIsOrderedBase64AndOthersAreRefused() throws {
        let device = try #require(UUID(uuidString: "00000000-0000-0000-0000-0000000000ff"))
        let clock = ReplicaClock(timestamp: HybridTimestamp(rawValue: 0x0102_0304_0506_0708), device: device)
        // Standard base64 of 01…08 and the UUID's bytes is "AQIDBAUGBwgAAAAAAAAAAAAAAAAAAAD/";
        // each digit's value maps A→-, B→0, …, /→z.
        let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        let ordered = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
        let expected = String("AQIDBAUGBwgAAAAAAAAAAAAAAAAAAAD/".map { ordered[standard.firstIndex(of: $0)!] })
        #expect(clock.text == expected)
        #expect(clock.description == "0102030405060708-00000000-0000-0000-0000-0000000000ff")
        for bad in ["", String(expected.dropLast()), expected + "-", String(expected.dropLast()) + "+", String(expected.dropLast()) + "é",
                    clock.description] {
            #expect(ReplicaClock(text: bad) == nil, "\(bad)")
        }
    }
}
