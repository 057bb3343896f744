@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// Opens a store on `standardModel` in `dir` (subdirectory "db").
func openStore(_ dir: TestDirectory, model: Cellar.Model = standardModel, options: StoreOptions = StoreOptions(durability: .none)) throws -> Store {
    try Store(directoryPath: dir.sub("db"), model: model, options: options)
}

@Suite struct BoxTests {
    static func extremes() -> AllTypes {
        let e = AllTypes()
        e.bool = true; e.int8 = .min; e.int16 = .min; e.int32 = .min; e.int64 = .min; e.int = .min
        e.uint8 = .max; e.uint16 = .max; e.uint32 = .max; e.uint64 = .max; e.uint = .max
        e.float = .nan; e.double = -.infinity
        e.string = "Grüße, 世界 🧀 \u{0}end"
        e.date = Date(timeIntervalSince1970: -62_135_596_800.123)   // year 1, with milliseconds
        e.data = Data(repeating: 0xAB, count: 3)
        e.bytes = []
        e.optBool = false; e.optInt8 = .max; e.optInt16 = .max; e.optInt32 = .max; e.optInt64 = .max; e.optInt = .max
        e.optUInt8 = 0; e.optUInt16 = 0; e.optUInt32 = 0; e.optUInt64 = 0; e.optUInt = 0
        e.optFloat = -0.0; e.optDouble = .greatestFiniteMagnitude
        e.optString = ""
        e.optDate = Date(timeIntervalSince1970: 4_102_444_800.5)
        e.optData = Data()
        e.optBytes = [0, 255]
        e.nanoDate = Date(timeIntervalSince1970: 1_700_000_000.123456789)
        return e
    }

    /// What a stored date reads back as: to the millisecond (or nanosecond for `date-nano`).
    static func expectedAfterStoring(_ e: AllTypes) -> String {
        let copy = AllTypes()
        for (k, v) in Mirror(reflecting: e).children.map({ ($0.label!, $0.value) }) { _ = (k, v) }
        copy.id = e.id
        let record = RecordBuilder()
        record.begin(slotCount: 36)
        try! AllTypes.entityBinding.write(e, to: record)
        return try! AllTypes.entityBinding.read(id: e.id, from: RecordReader(record.bytes)).description
    }

    @Test func everyTypeRoundTripsWithExtremes() throws {
        let dir = TestDirectory("box-types")
        defer { dir.remove() }
        let plain = AllTypes()
        let extreme = Self.extremes()
        let big = AllTypes()
        big.string = String(repeating: "ä", count: 512 * 1024)      // 1 MiB of UTF-8
        big.optBytes = [UInt8](repeating: 7, count: 1 << 20)
        var ids: [EntityId<AllTypes>] = []
        do {
            let store = try openStore(dir)
            let box = store.box(for: AllTypes.self)
            ids = try box.put([plain, extreme, big])
            #expect(ids.map(\.value) == [1, 2, 3])
            #expect(plain.id == 1 && extreme.id == 2 && big.id == 3)
        }
        let store = try openStore(dir)
        let box = store.box(for: AllTypes.self)
        let read = try box.get(ids.map(\.value))
        #expect(read.count == 3)
        #expect(read[0] == plain)
        // Everything but the dates survives exactly; dates to the millisecond.
        #expect(read[1].description == Self.expectedAfterStoring(extreme))
        #expect(read[1].int64 == .min && read[1].uint64 == .max && read[1].float.isNaN && read[1].double == -.infinity)
        #expect(read[1].string == extreme.string && read[1].optFloat?.sign == .minus && read[1].optString == "")
        #expect((read[1].date.timeIntervalSince1970 * 1000).rounded() == (extreme.date.timeIntervalSince1970 * 1000).rounded())
        #expect(abs(read[1].nanoDate.timeIntervalSince1970 - extreme.nanoDate.timeIntervalSince1970) < 1e-6)
        #expect(read[2].string == big.string && read[2].optBytes == big.optBytes)
        #expect(read[0].optInt == nil && read[0].optString == nil && read[0].optData == nil)
    }

    @Test func datesKeepMillisecondsAndRefuseTheUnstorable() throws {
        let store = try Store(directoryPath: "memory:dates", model: standardModel)
        let box = store.box(for: AllTypes.self)
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        for _ in 0..<2_000 {
            let ms = Int64(bitPattern: rng.next()) % 100_000_000_000_000
            let e = AllTypes()
            e.date = Date(timeIntervalSince1970: Double(ms) / 1000)
            try box.put(e)
            let back = try #require(try box.get(e.id))
            #expect(try DateEncoding.milliseconds(back.date) == ms)
        }
        let bad = AllTypes()
        bad.date = Date(timeIntervalSince1970: 1e300)
        #expect(throws: CellarError.self) { try box.put(bad) }
        #expect(bad.id == 0)
    }

    /// The date encoding's rounding is `rounded()`'s (halves away from zero) for every double it
    /// accepts: halves, near-halves, negatives, the limits and random bit patterns.
    @Test func dateRoundingMatchesRounded() throws {
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        var values: [Double] = [0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 0.49999999999999994, -0.49999999999999994,
                                4503599627370495.5, -4503599627370495.5, 9007199254740992, 9.2e18, -9.2e18,
                                1_700_000_000_042.4999, 1_700_000_000_042.5, 1_700_000_000_042.5000001]
        for _ in 0..<20_000 {
            let bits = rng.next()
            switch bits % 4 {
            case 0: values.append(Double(bitPattern: rng.next()))
            case 1: values.append(Double(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 60)) + [0.5, -0.5, 0.25, 0.75][Int((bits >> 8) % 4)])
            case 2: values.append((Double(Int64(bitPattern: rng.next()) % 100_000_000_000_000) / 1000) * 1000)
            default: values.append(Double(Int64(bitPattern: rng.next()) % 1_000_000) + Double(rng.next() % 1000) / 1000)
            }
        }
        for value in values {
            let rounded = value.rounded()
            if rounded.isFinite && rounded >= -9.2e18 && rounded <= 9.2e18 && value.isFinite {
                #expect(try DateStorage.whole(value, unit: "ms") == Int64(rounded), "\(value)")
            } else {
                #expect(throws: CellarError.self, "\(value)") { try DateStorage.whole(value, unit: "ms") }
            }
        }
    }

    @Test func putModesAndIds() throws {
        let dir = TestDirectory("box-modes")
        defer { dir.remove() }
        do {
            let store = try openStore(dir)
            let notes = store.box(for: Note.self)
            var note = Note(title: "a")
            let id = try notes.put(&note)
            #expect(id.value == 1 && note.id == id)
            // A struct passed by value keeps its id 0; the id is returned.
            let other = Note(title: "b")
            #expect(try notes.put(other).value == 2 && other.id == 0)
            #expect(throws: CellarError.idAlreadyExists(entity: "Note", id: 1)) { try notes.put(note, mode: .insert) }
            #expect(throws: CellarError.notFound(entity: "Note", id: 0)) { try notes.put(Note(title: "c"), mode: .update) }
            note.title = "a2"
            try notes.put(note, mode: .update)
            #expect(try notes.get(id)?.title == "a2")
            // An id put never handed out is refused: ids are not assignable for Note.
            #expect(throws: CellarError.self) { try notes.put(Note(id: 99, title: "x")) }
            #expect(try notes.remove(id))
            #expect(try !notes.remove(id))
            #expect(throws: CellarError.notFound(entity: "Note", id: 1)) { try notes.put(note, mode: .update) }
            // A removed id may be put again explicitly (it was handed out), but is never handed out anew.
            #expect(try notes.put(Note(title: "d")).value == 3)
            try notes.put(note, mode: .insert)
            #expect(try notes.count() == 3)
            #expect(try notes.removeAll() == 3)
            #expect(try notes.isEmpty())
        }
        let store = try openStore(dir)
        let notes = store.box(for: Note.self)
        #expect(try notes.put(Note(title: "after reopen")).value == 4)

        let tagged = store.box(for: Tagged.self)
        try tagged.put(Tagged(id: 1000, tag: "assigned"))
        #expect(try tagged.put(Tagged(tag: "next")).value == 1001)
        #expect(try tagged.get(1000 as Id)?.tag == "assigned")
        #expect(throws: CellarError.idAlreadyExists(entity: "Tagged", id: 1000)) { try tagged.put(Tagged(id: 1000), mode: .insert) }
        try tagged.put(Tagged(id: 5, tag: "low"), mode: .insert)
        #expect(try tagged.all().map(\.id) == [5, 1000, 1001])
    }

    @Test func getContainsCountRemove() throws {
        let store = try Store(directoryPath: "memory:crud", model: standardModel)
        let box = store.box(for: Note.self)
        #expect(try box.isEmpty() && box.all().isEmpty && box.get(1 as Id) == nil && !box.contains(1 as Id))
        let ids = try box.put((0..<10).map { Note(title: "n\($0)") })
        #expect(try box.count() == 10)
        #expect(try box.contains(ids[3]) && box.contains(ids.map(\.value)) && !box.contains([1, 11]))
        #expect(try box.get([ids[9], ids[0], EntityId(77)]).map(\.title) == ["n9", "n0"])
        #expect(try box.all().map(\.title) == (0..<10).map { "n\($0)" })
        #expect(try box.remove([ids[0], ids[1], EntityId(500)]) == 2)
        let n5 = try #require(try box.get(ids[5]))
        #expect(try box.remove(n5) && !box.contains(ids[5]))
        #expect(try box.remove([Note(title: "never stored")]) == 0)
        #expect(try box.count() == 7)
    }

    @Test func corruptRecordsThrowFileCorrupt() throws {
        let store = try Store(directoryPath: "memory:corrupt", model: standardModel)
        let box = store.box(for: AllTypes.self)
        let e = Self.extremes()
        try box.put(e)
        let good = try store.engine.read { txn in Array(try txn.get(txn.tree("e1")!, key: withUnsafeBytes(of: e.id.bigEndian) { Array($0) })!) }
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        var corrupt = 0
        // Cut the record at every length, then flip random bytes: a read gives an object or
        // CellarError.fileCorrupt, never a crash.
        var variants = (0..<good.count).map { Array(good[..<$0]) }
        for _ in 0..<3_000 {
            var bytes = good
            for _ in 0..<(1 + Int(rng.next() % 3)) { bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            variants.append(bytes)
        }
        for bytes in variants {
            try store.engine.write { txn in try txn.put(txn.tree("e1")!, key: withUnsafeBytes(of: e.id.bigEndian) { Array($0) }, value: bytes) }
            do {
                _ = try box.get(e.id)
            } catch CellarError.Code.fileCorrupt {
                corrupt += 1
            }
        }
        #expect(corrupt > good.count / 2)
    }

    @Test func storeRefusesUnknownEntitiesAndClosedUse() throws {
        let store = try Store(directoryPath: "memory:unknown", model: testModel([Note.modelEntity]))
        #expect(throws: CellarError.self) { try store.box(for: AllTypes.self).count() }
        // A binding from another generator run: more slots than the model's last property ID.
        var older = Note.modelEntity
        older.properties.removeLast()
        older.lastPropertyId = older.properties.last!.id
        let mismatched = try Store(directoryPath: "memory:mismatch", model: testModel([older]))
        #expect(throws: CellarError.self) { try mismatched.box(for: Note.self).put(Note(title: "x")) }
        let notes = store.box(for: Note.self)
        try notes.put(Note(title: "x"))
        store.close()
        #expect(throws: CellarError.storeClosed) { try notes.count() }
        #expect(throws: CellarError.storeClosed) { try notes.put(Note(title: "y")) }
    }

    @Test func inMemoryStoresArePrivateAndLeaveNothing() throws {
        let a = try Store(directoryPath: "memory:same", model: standardModel)
        let b = try Store(directoryPath: "memory:same", model: standardModel)
        try a.box(for: Note.self).put(Note(title: "only in a"))
        #expect(try a.box(for: Note.self).count() == 1)
        #expect(try b.box(for: Note.self).count() == 0)
        #expect(!FileManager.default.fileExists(atPath: "memory:same"))
        #expect(throws: CellarError.self) { try Store(directoryPath: "memory:ro", model: standardModel, options: StoreOptions(readOnly: true)) }
    }

    @Test func readOnlyStores() throws {
        let dir = TestDirectory("box-readonly")
        defer { dir.remove() }
        #expect(throws: CellarError.self) { try openStore(dir, options: StoreOptions(readOnly: true)) }
        do {
            let store = try openStore(dir)
            try store.box(for: Note.self).put(Note(title: "kept"))
        }
        let writer = try openStore(dir)
        let reader = try openStore(dir, options: StoreOptions(readOnly: true))
        #expect(try reader.box(for: Note.self).all().map(\.title) == ["kept"])
        #expect(throws: CellarError.readOnly) { try reader.box(for: Note.self).put(Note(title: "no")) }
        try writer.box(for: Note.self).put(Note(title: "second"))
        // The read-only store's next transaction sees the writer's commits, across a compaction.
        #expect(try reader.box(for: Note.self).all().map(\.title) == ["kept", "second"])
        try writer.compact()
        try writer.box(for: Note.self).put(Note(title: "third"))
        #expect(try reader.box(for: Note.self).all().map(\.title) == ["kept", "second", "third"])
        // A code model that differs cannot be synced read-only.
        var changed = standardModel
        changed.entities[1].properties.append(ModelProperty(name: "extra", id: IdUid(id: 4, uid: 2_000_004), type: .long))
        changed.entities[1].lastPropertyId = IdUid(id: 4, uid: 2_000_004)
        #expect(throws: CellarError.self) { try openStore(dir, model: changed, options: StoreOptions(readOnly: true)) }
    }
}
