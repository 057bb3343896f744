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
        let texts = clocks.map(\.description)
        for (a, aText) in zip(clocks, texts) {
            for (b, bText) in zip(clocks, texts) where (a < b) != (aText < bText) {
                Issue.record("\(a) < \(b) is \(a < b), their texts say otherwise")
            }
            #expect(ReplicaClock(text: aText) == a)
        }
    }
}
