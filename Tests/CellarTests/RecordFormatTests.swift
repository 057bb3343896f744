@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// The record's two slot-table widths: narrow (u16 offsets) below 64 KiB, wide (u32) from there
/// on, turned wide in the middle of a build; and wide records of older stores still read.
@Suite struct RecordFormatTests {
    static func format(_ bytes: UnsafeRawBufferPointer) -> UInt16 { bytes.loadUnaligned(fromByteOffset: 2, as: UInt16.self) }

    @Test func smallRecordsAreNarrow() throws {
        let builder = RecordBuilder()
        builder.begin(slotCount: 6)
        builder.add(Int64(-5), slot: 1)
        builder.add("hello", slot: 3)
        builder.add(UInt8(7), slot: 5)
        let bytes = builder.bytes
        #expect(Self.format(bytes) == RecordLayout.narrowFormat)
        #expect(bytes.count == 4 + 2 * 6 + 8 + (4 + 5) + 1, "2 bytes a slot")
        let reader = try RecordReader(bytes)
        #expect(try reader.read(Int64.self, slot: 1) == -5 && reader.string(slot: 3) == "hello" && reader.read(UInt8.self, slot: 5) == 7)
        #expect(try reader.read(Int64.self, slot: 0) == nil && reader.string(slot: 2) == nil)
    }

    /// Strings read back as written (ASCII or not, short or long); bytes that are not UTF-8 are
    /// `fileCorrupt`, never a repaired string, and the check without a string agrees; the ASCII
    /// test agrees with a byte-by-byte one.
    @Test func stringsAreValidatedAsTheyAreRead() throws {
        for text in ["", "a", "seven77", "eight888", "Note title 000000042", "été à Noël", "漢字 and 🎉 emoji",
                     String(repeating: "x", count: 100) + "é", String(repeating: "ü", count: 33)] {
            let builder = RecordBuilder()
            builder.begin(slotCount: 1)
            builder.add(text, slot: 0)
            #expect(try RecordReader(builder.bytes).string(slot: 0) == text)
            #expect(Array(text.utf8).withUnsafeBytes { RecordReader.isValidUTF8($0) }, "\(text)")
        }
        // A lone continuation byte, a truncated sequence, an overlong form, a surrogate, each at
        // several places in ASCII text.
        for bad: [UInt8] in [[0x80], [0xE2, 0x82], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xFF]] {
            for prefix in [0, 3, 8, 21] {
                let bytes = [UInt8](repeating: 0x61, count: prefix) + bad + [0x62, 0x63]
                let builder = RecordBuilder()
                builder.begin(slotCount: 1)
                bytes.withUnsafeBytes { builder.add(bytes: $0, slot: 0) }
                #expect(throws: CellarError.self, "\(bytes)") { try RecordReader(builder.bytes).string(slot: 0) }
                bytes.withUnsafeBytes { #expect(!RecordReader.isValidUTF8($0), "\(bytes)") }
            }
        }
        var rng = SplitMix64(seed: 5)
        for length in 0..<40 {
            for position in -1..<length {
                var bytes = (0..<length).map { _ in UInt8(rng.next() % 128) }
                if position >= 0 { bytes[position] |= 0x80 }
                bytes.withUnsafeBytes { #expect(RecordReader.isASCII($0) == !bytes.contains { $0 >= 0x80 }, "\(length) \(position)") }
            }
        }
    }

    @Test("a record turns wide when it passes 64 KiB, the fields written before it moved with it",
          arguments: [65_523, 65_524, 70_000, 300_000])
    func largeRecordsTurnWide(length: Int) throws {
        let builder = RecordBuilder(capacity: 64)
        builder.begin(slotCount: 2)
        let text = String(repeating: "x", count: length)
        builder.add(text, slot: 1)
        // Header 4 + table 4 + length 4 + the bytes: 65,535 is the last narrow length.
        let narrowLength = 4 + 2 * 2 + 4 + length
        #expect(Self.format(builder.bytes) == (narrowLength <= 65_535 ? RecordLayout.narrowFormat : RecordLayout.wideFormat))

        let mixed = RecordBuilder(capacity: 64)
        mixed.begin(slotCount: 5)
        mixed.add(Int32(-1), slot: 0)
        mixed.add("before", slot: 2)
        mixed.add(text, slot: 3)
        mixed.add(Double(2.5), slot: 4)
        let reader = try RecordReader(mixed.bytes)
        #expect(try reader.read(Int32.self, slot: 0) == -1 && reader.string(slot: 1) == nil)
        #expect(try reader.string(slot: 2) == "before" && reader.string(slot: 3) == text && reader.double(slot: 4) == 2.5)
        // Built again from the start, the builder is narrow again.
        mixed.begin(slotCount: 1)
        mixed.add(UInt8(1), slot: 0)
        #expect(Self.format(mixed.bytes) == RecordLayout.narrowFormat)
    }

    @Test func wideRecordsOfOlderStoresStillRead() throws {
        // Format 1 as every record was written before format 2: two slots, u32 offsets.
        var bytes: [UInt8] = [2, 0, 1, 0, 12, 0, 0, 0, 20, 0, 0, 0]
        bytes += withUnsafeBytes(of: Int64(42).littleEndian) { Array($0) }
        bytes += [3, 0, 0, 0] + Array("abc".utf8)
        try bytes.withUnsafeBytes { raw in
            let reader = try RecordReader(raw)
            #expect(try reader.read(Int64.self, slot: 0) == 42 && reader.string(slot: 1) == "abc")
            // And compaction's rewrite (slot 1 retired) makes a narrow record of what is left.
            let rewritten = try #require(try reader.withoutRetiredFields([.long], into: RecordBuilder()))
            try rewritten.withUnsafeBytes { out in
                #expect(Self.format(out) == RecordLayout.narrowFormat)
                let again = try RecordReader(out)
                #expect(try again.read(Int64.self, slot: 0) == 42 && again.string(slot: 1) == nil && again.slots == 2)
            }
        }
        // Unknown formats and tables longer than the record are corrupt.
        for bad in [[1, 0, 3, 0, 0, 0], [3, 0, 2, 0, 0]] as [[UInt8]] {
            #expect(throws: CellarError.self) { try bad.withUnsafeBytes { _ = try RecordReader($0) } }
        }
        // A narrow offset into the table itself is corrupt.
        let intoTable: [UInt8] = [1, 0, 2, 0, 4, 0, 9, 9]
        #expect(throws: CellarError.self) { try intoTable.withUnsafeBytes { try RecordReader($0).read(UInt8.self, slot: 0) } }
    }

    @Test func aLargeObjectRoundTripsThroughAStore() throws {
        let store = try Store(directoryPath: "memory:wide", model: standardModel)
        defer { store.close() }
        let notes = store.box(for: Note.self)
        let title = String(repeating: "é", count: 50_000)  // 100,000 bytes: a wide record
        let id = try notes.put(Note(title: title, text: "after"))
        #expect(try notes.get(id)?.title == title && notes.get(id)?.text == "after")
    }
}
