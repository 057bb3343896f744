@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

private struct Boom: Error {}

@Suite struct HybridClockTests {
    @Test func aLaterWallClockGivesItsMillisecond() {
        let last = HybridTimestamp(milliseconds: 1_000, counter: 7)
        #expect(HybridClock.next(after: last, wallMilliseconds: 1_001) == HybridTimestamp(milliseconds: 1_001, counter: 0))
    }

    @Test func theSameMillisecondCountsOn() {
        let last = HybridTimestamp(milliseconds: 1_000, counter: 7)
        #expect(HybridClock.next(after: last, wallMilliseconds: 1_000) == HybridTimestamp(milliseconds: 1_000, counter: 8))
    }

    @Test func aWallClockGoneBackNeverGoesBackwards() {
        var last = HybridTimestamp(milliseconds: 5_000, counter: 0)
        for wall in [4_000, 4_999, 1, 0] as [UInt64] {
            let next = HybridClock.next(after: last, wallMilliseconds: wall)
            #expect(next > last)
            #expect(next.milliseconds == 5_000)
            last = next
        }
        #expect(last.counter == 4)
        // Once the wall clock is past it again, it takes over.
        #expect(HybridClock.next(after: last, wallMilliseconds: 5_001) == HybridTimestamp(milliseconds: 5_001, counter: 0))
    }

    @Test func aFullCounterCarriesIntoTheNextMillisecond() {
        let last = HybridTimestamp(milliseconds: 1_000, counter: .max)
        let next = HybridClock.next(after: last, wallMilliseconds: 1_000)
        #expect(next == HybridTimestamp(milliseconds: 1_001, counter: 0))
        // The wall clock reaching that millisecond later still moves on.
        #expect(HybridClock.next(after: next, wallMilliseconds: 1_001) == HybridTimestamp(milliseconds: 1_001, counter: 1))
        let top = HybridTimestamp(rawValue: .max)
        #expect(HybridClock.next(after: top, wallMilliseconds: 0) == top)
    }

    @Test func millisecondsBeyond48BitsAreClamped() {
        let next = HybridClock.next(after: HybridTimestamp(rawValue: 0), wallMilliseconds: .max)
        #expect(next.milliseconds == HybridClock.millisecondMask && next.counter == 0)
    }
}

@Suite struct HistoryTests {
    static func options(history: Bool = true) -> StoreOptions {
        var options = StoreOptions(durability: .none)
        options.changeHistory = history
        return options
    }

    static let noteUid: UInt64 = 2_000_000
    static let taggedUid: UInt64 = 3_000_000

    // MARK: Encoding

    @Test func anEntryRoundTripsAndEveryTruncationOrFlipThrowsOrReads() throws {
        let entities = [
            HistoryEncoding.EntityChanges(entityUid: Self.noteUid, allProperties: [2, 3], objects: [
                .init(id: 1, remove: false, properties: nil, relations: []),
                .init(id: 300, remove: false, properties: [3], relations: [7]),
                .init(id: 1 << 40, remove: true, properties: [], relations: []),
            ]),
            HistoryEncoding.EntityChanges(entityUid: Self.taggedUid, allProperties: [2], objects: [
                .init(id: 5, remove: false, properties: [2], relations: []),
            ]),
        ]
        let timestamp = HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 3)
        let bytes = HistoryEncoding.encode(timestamp: timestamp, entities: entities)
        let names = HistoryNames(standardModel)
        let entry = try bytes.withUnsafeBytes { try HistoryEncoding.decode(sequence: 9, $0, model: names) }
        #expect(entry.sequence == 9 && entry.timestamp == timestamp)
        #expect(entry.changes == [
            HistoryChange(entityUid: Self.noteUid, entityName: "Note", id: 1, operation: .put,
                          changedPropertyIds: [2, 3], changedPropertyNames: ["title", "text"]),
            HistoryChange(entityUid: Self.noteUid, entityName: "Note", id: 300, operation: .put,
                          changedPropertyIds: [3], changedPropertyNames: ["text"], changedRelationIds: [7]),
            HistoryChange(entityUid: Self.noteUid, entityName: "Note", id: 1 << 40, operation: .remove),
            HistoryChange(entityUid: Self.taggedUid, entityName: "Tagged", id: 5, operation: .put,
                          changedPropertyIds: [2], changedPropertyNames: ["tag"]),
        ])
        for length in 0..<bytes.count {
            #expect(throws: CellarError.self) {
                try Array(bytes[..<length]).withUnsafeBytes { _ = try HistoryEncoding.decode(sequence: 9, $0, model: names) }
            }
        }
        #expect(throws: CellarError.self) {
            try (bytes + [0]).withUnsafeBytes { _ = try HistoryEncoding.decode(sequence: 9, $0, model: names) }
        }
        var random = SplitMix64(seed: 42)
        for _ in 0..<2_000 {
            var flipped = bytes
            flipped[Int(random.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: random.next() | 1)
            do { _ = try flipped.withUnsafeBytes { try HistoryEncoding.decode(sequence: 9, $0, model: names) } } catch let error as CellarError {
                #expect(error.code == .fileCorrupt)
            }
        }
    }

    /// Entries of random sizes (ids far apart, IDs up to 2^32 − 1, long lists, removals) read
    /// back as written: the writer grows its buffer past a small first guess without writing
    /// beyond it (it asserts so in debug builds).
    @Test(arguments: [1, 2, 3]) func entriesOfAnySizeRoundTrip(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        func ids(_ most: Int) -> [UInt32] {
            Array(Set((0..<Int(random.next() % UInt64(most + 1))).map { _ in
                random.next() % 4 == 0 ? UInt32.max - UInt32(random.next() % 1_000) : UInt32(1 + random.next() % 200)
            })).sorted()
        }
        for _ in 0..<20 {
            var entities: [HistoryEncoding.EntityChanges] = []
            var uid: UInt64 = 0
            for _ in 0..<(1 + random.next() % 3) {
                uid += 1 + random.next() % (1 << 40)
                var objects: [HistoryEncoding.ObjectChange] = [], id: Id = 0
                for _ in 0..<(random.next() % 3_000) {
                    id += 1 + (random.next() % 8 == 0 ? random.next() % (1 << 50) : random.next() % 3)
                    let remove = random.next() % 10 == 0
                    objects.append(.init(id: id, remove: remove, properties: remove ? [] : (random.next() % 3 == 0 ? nil : ids(40)),
                                         relations: remove ? [] : ids(5)))
                }
                entities.append(.init(entityUid: uid, allProperties: ids(30), objects: objects))
            }
            let bytes = HistoryEncoding.encode(timestamp: HybridTimestamp(rawValue: random.next()), entities: entities)
            let entry = try bytes.withUnsafeBytes { try HistoryEncoding.decode(sequence: 1, $0, model: HistoryNames(Model())) }
            let expected = entities.flatMap { entity in
                entity.objects.map { object in
                    HistoryChange(entityUid: entity.entityUid, entityName: nil, id: object.id, operation: object.remove ? .remove : .put,
                                  changedPropertyIds: object.remove ? [] : object.properties ?? entity.allProperties,
                                  changedRelationIds: object.relations)
                }
            }
            #expect(entry.changes == expected)
        }
    }

    /// A Note record with `title` and `text` (nil: absent), written in slot order or reversed,
    /// its slot table `slotCount` long (more: slots of a later model, absent).
    static func noteRecord(_ title: String?, _ text: String?, reversed: Bool, slotCount: Int = 3) -> [UInt8] {
        let builder = RecordBuilder()
        builder.begin(slotCount: slotCount)
        if reversed {
            builder.add(text, slot: 2)
            builder.add(title, slot: 1)
        } else {
            builder.add(title, slot: 1)
            builder.add(text, slot: 2)
        }
        return Array(builder.bytes)
    }

    /// The property IDs the history lists for a Note stored as `old`, then as `new`.
    static func changedProperties(_ old: [UInt8], _ new: [UInt8]) throws -> [UInt32] {
        let schema = try #require(Store.schemas(of: standardModel).first { $0.name == "Note" })
        var ids: [UInt32] = []
        let slots = try old.withUnsafeBytes { old in
            try new.withUnsafeBytes { new in
                try HistoryRecorder.changedProperties(of: schema, old: RecordReader(old), new: RecordReader(new), into: &ids)
            }
        }
        // The mask it returns says the same (what an undoable write keeps).
        #expect(slots == ids.reduce(0) { $0 | 1 << UInt64($1 - 1) })
        return ids
    }

    /// A replace recorded in an undoable write: a compact entry when every changed property is
    /// below ID 65, else the changed fields as records; either reads back as the same change.
    @Test func anUndoableReplaceKeepsTheChangedFieldsBelowAndBeyondTheSlotMask() throws {
        for wideId in [UInt32(3), 70] {
            let entity = ModelEntity(name: "Wide", id: IdUid(id: 1, uid: 7_100), lastPropertyId: IdUid(id: wideId, uid: 7_100 + UInt64(wideId)), properties: [
                ModelProperty(name: "id", id: IdUid(id: 1, uid: 7_101), type: .long, flags: .id),
                ModelProperty(name: "title", id: IdUid(id: 2, uid: 7_102), type: .string),
                ModelProperty(name: "count", id: IdUid(id: wideId, uid: 7_100 + UInt64(wideId)), type: .long),
            ])
            let model = Model(entities: [entity], lastEntityId: entity.id)
            let schema = try #require(Store.schemas(of: model).first)
            func record(_ title: String, _ count: Int64) -> [UInt8] {
                let builder = RecordBuilder()
                builder.begin(slotCount: Int(wideId))
                builder.add(title, slot: 1)
                builder.add(count, slot: Int(wideId) - 1)
                return Array(builder.bytes)
            }
            let old = record("before", 1), new = record("after", 2)
            let recorder = HistoryRecorder()
            recorder.undo = UndoCapture(name: "edit")
            try old.withUnsafeBytes { old in
                try new.withUnsafeBytes { new in
                    try recorder.noteReplace(schema, id: 42, old: RecordReader(old), new: RecordReader(new))
                }
            }
            let bytes = try #require(recorder.undo?.wholeStep(objects: 1).map { Array($0) })
            let step = try UndoStep(bytes: bytes, schemas: [entity.id.uid: schema], schemasById: [entity.id.id: schema])
            let object = try #require(step.objects.first)
            #expect(step.name == "edit" && step.objects.count == 1 && object.id == 42 && object.entityUid == 7_100)
            #expect(object.changed == [2, wideId], "property \(wideId)")
            let before = try #require(object.before), after = try #require(object.after)
            try before.withUnsafeBytes { before in
                try after.withUnsafeBytes { after in
                    let (b, a) = (try RecordReader(before), try RecordReader(after))
                    #expect(try b.text(slot: 1) == "before" && a.text(slot: 1) == "after", "property \(wideId)")
                    #expect(try b.read(Int64.self, slot: Int(wideId) - 1) == 1 && a.read(Int64.self, slot: Int(wideId) - 1) == 2, "property \(wideId)")
                }
            }
        }
    }

    /// Fields written out of slot order are compared by their own extents (the sorting path).
    @Test func changedPropertiesOfRecordsWrittenInAnyOrder() throws {
        for (oldReversed, newReversed) in [(false, false), (true, false), (false, true), (true, true)] {
            func changed(_ a: (String, String?), _ b: (String, String?)) throws -> [UInt32] {
                try Self.changedProperties(Self.noteRecord(a.0, a.1, reversed: oldReversed),
                                           Self.noteRecord(b.0, b.1, reversed: newReversed))
            }
            #expect(try changed(("a", "t"), ("a", "t")) == [])
            #expect(try changed(("a", "t"), ("b", "t")) == [2])
            #expect(try changed(("a", "t"), ("a", "u")) == [3])
            #expect(try changed(("a", "t"), ("a", nil)) == [3])
            #expect(try changed(("a", nil), ("ab", "")) == [2, 3])
            #expect(try changed(("ab", "t"), ("a", "bt")) == [2, 3])
        }
    }

    /// Random pairs of records, each written in either order, with values absent, empty, equal or
    /// sharing a prefix, slot tables of u16 or (a record past 64 KiB) u32 offsets, of the same
    /// length or not: the listed properties are exactly those whose values differ.
    @Test func changedPropertiesMatchTheValuesCompared() throws {
        var random = SplitMix64(seed: 17)
        // Fields of every length the comparison treats apart (up to 3, 4–8, 9–16 bytes and longer),
        // pairs of one length differing in their first or their last byte.
        var choices: [String?] = [nil, "", "a", "ab", "b", "abc", String(repeating: "x", count: 300),
                                  String(repeating: "w", count: 70_000)]
        for length in [4, 5, 7, 8, 9, 12, 15, 16, 17, 40] {
            let text = String(repeating: "m", count: length)
            choices += [text, "z" + text.dropFirst(), text.dropLast() + "z"]
        }
        func pick() -> String? { choices[Int(random.next() % UInt64(choices.count))] }
        for _ in 0..<2_000 {
            let a = (pick(), pick()), b = (pick(), pick())
            let ids = try Self.changedProperties(Self.noteRecord(a.0, a.1, reversed: random.next() % 2 == 0, slotCount: 3 + Int(random.next() % 2)),
                                                 Self.noteRecord(b.0, b.1, reversed: random.next() % 2 == 0, slotCount: 3 + Int(random.next() % 2)))
            let expected = (a.0 != b.0 ? [UInt32(2)] : []) + (a.1 != b.1 ? [3] : [])
            #expect(ids == expected, "\(a) → \(b)")
        }
    }

    // MARK: Randomized against a model

    /// What the history must say of one object after a transaction.
    struct Expected: Equatable {
        var remove = false
        var all = false
        var properties: Set<UInt32> = []
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomTransactionsMatchAModel(seed: UInt64) throws {
        let dir = TestDirectory("history-random-\(seed)")
        defer { dir.remove() }
        var random = SplitMix64(seed: seed)
        func roll(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        var notesNow: [Id: Note] = [:]
        var taggedNow: [Id: String] = [:]
        var expectedEntries: [[HistoryChange]] = []
        var store = try openStore(dir, options: Self.options())
        for transaction in 0..<60 {
            if transaction % 20 == 19 {
                store.close()
                // Opened without the option: a store that recorded history goes on recording it.
                store = try openStore(dir, options: Self.options(history: transaction % 40 == 19))
                #expect(store.recordsHistory)
            }
            let notes = store.box(for: Note.self), tagged = store.box(for: Tagged.self)
            var notesAfter = notesNow, taggedAfter = taggedNow
            var changes: [UInt64: [Id: Expected]] = [:]
            func put(_ uid: UInt64, _ id: Id, new: Bool, changed: Set<UInt32>) {
                var change = changes[uid]?[id] ?? Expected()
                if new || change.remove {
                    change = Expected(all: true)
                } else if !change.all {
                    change.properties.formUnion(changed)
                }
                changes[uid, default: [:]][id] = change
            }
            func text() -> String? { roll(3) == 0 ? nil : ["", "a", "b", "long text \(roll(4))"][roll(4)] }
            let rollBack = roll(6) == 0
            do {
                try store.runInTransaction {
                    for _ in 0..<(1 + roll(12)) {
                        switch roll(10) {
                        case 0...2:
                            var note = Note(title: ["x", "y", ""][roll(3)], text: text())
                            try notes.put(&note)
                            notesAfter[note.id.value] = note
                            put(Self.noteUid, note.id.value, new: true, changed: [])
                        case 3...4:
                            guard let id = notesAfter.keys.sorted().randomElement(using: &random) else { continue }
                            var note = notesAfter[id]!
                            if roll(2) == 0 { note.title = ["x", "y", "z"][roll(3)] }
                            if roll(2) == 0 { note.text = text() }
                            let old = notesAfter[id]!
                            try notes.put(note)
                            notesAfter[id] = note
                            var changed: Set<UInt32> = []
                            if old.title != note.title { changed.insert(2) }
                            if old.text != note.text { changed.insert(3) }
                            if !changed.isEmpty { put(Self.noteUid, id, new: false, changed: changed) }
                        case 5:
                            guard let id = notesAfter.keys.sorted().randomElement(using: &random) else { continue }
                            #expect(try notes.remove(id))
                            notesAfter[id] = nil
                            changes[Self.noteUid, default: [:]][id] = Expected(remove: true)
                        case 6:
                            guard roll(3) == 0 else { continue }
                            #expect(try notes.removeAll() == notesAfter.count)
                            for id in notesAfter.keys { changes[Self.noteUid, default: [:]][id] = Expected(remove: true) }
                            notesAfter = [:]
                        case 7...8:
                            let id = Id(1 + roll(12)), tag = ["p", "q"][roll(2)]
                            try tagged.put(Tagged(id: id, tag: tag))
                            if let old = taggedAfter[id] {
                                if old != tag { put(Self.taggedUid, id, new: false, changed: [2]) }
                            } else {
                                put(Self.taggedUid, id, new: true, changed: [])
                            }
                            taggedAfter[id] = tag
                        default:
                            let id = Id(1 + roll(12))
                            let removed = try tagged.remove(id)
                            #expect(removed == (taggedAfter[id] != nil))
                            if removed { changes[Self.taggedUid, default: [:]][id] = Expected(remove: true) }
                            taggedAfter[id] = nil
                        }
                    }
                    if rollBack { throw Boom() }
                }
            } catch is Boom {
                #expect(rollBack)
                continue
            }
            notesNow = notesAfter
            taggedNow = taggedAfter
            let entry = changes.keys.sorted().flatMap { uid -> [HistoryChange] in
                let all: [UInt32] = uid == Self.noteUid ? [2, 3] : [2]
                let names: [UInt32: String] = [2: uid == Self.noteUid ? "title" : "tag", 3: "text"]
                return changes[uid]!.keys.sorted().map { id in
                    let change = changes[uid]![id]!
                    let properties = change.remove ? [] : change.all ? all : change.properties.sorted()
                    return HistoryChange(entityUid: uid, entityName: uid == Self.noteUid ? "Note" : "Tagged", id: id,
                                         operation: change.remove ? .remove : .put, changedPropertyIds: properties,
                                         changedPropertyNames: properties.map { names[$0]! })
                }
            }
            if !entry.isEmpty { expectedEntries.append(entry) }
        }
        let history = try store.history(since: 0)
        #expect(history.map(\.sequence) == Array(1...UInt64(expectedEntries.count)))
        #expect(try store.lastHistorySequence() == UInt64(expectedEntries.count))
        #expect(history.count == expectedEntries.count)
        for (entry, expected) in zip(history, expectedEntries) where entry.changes != expected {
            Issue.record("entry \(entry.sequence): \(entry.changes) != \(expected)")
            break
        }
        #expect(zip(history, history.dropFirst()).allSatisfy { $0.timestamp < $1.timestamp })
        // Reading on from any point, in pages, gives the same.
        let since = UInt64(roll(history.count))
        var paged: [HistoryEntry] = []
        var last = since
        while true {
            let page = try store.history(since: last, limit: 3)
            guard let end = page.last else { break }
            paged += page
            last = end.sequence
        }
        #expect(paged == Array(history.dropFirst(Int(since))))
    }

    // MARK: Reopen, prune, compaction, off

    @Test func sequenceAndClockStayMonotonicAcrossReopensAndAClockGoneBack() throws {
        let dir = TestDirectory("history-reopen")
        defer { dir.remove() }
        var timestamps: [HybridTimestamp] = []
        for round in 0..<3 {
            let store = try openStore(dir, options: Self.options())
            // Round 1's clock stands far behind round 0's.
            let wall: UInt64 = round == 1 ? 1_000 : 1_700_000_000_000 + UInt64(round)
            store.historyClock = { wall }
            let notes = store.box(for: Note.self)
            for i in 0..<3 { try notes.put(Note(title: "\(round).\(i)")) }
            let entries = try store.history(since: 0)
            #expect(entries.map(\.sequence) == Array(1...UInt64(3 * (round + 1))))
            timestamps = entries.map(\.timestamp)
            store.close()
        }
        #expect(zip(timestamps, timestamps.dropFirst()).allSatisfy { $0 < $1 })
        #expect(timestamps[3].milliseconds == timestamps[2].milliseconds)  // counted on from round 0
        #expect(timestamps[6] == HybridTimestamp(milliseconds: 1_700_000_000_002, counter: 0))
    }

    @Test func pruningDropsWhatCameBeforeAndRefusesToReadPastIt() throws {
        let dir = TestDirectory("history-prune")
        defer { dir.remove() }
        let store = try openStore(dir, options: Self.options())
        let notes = store.box(for: Note.self)
        for i in 0..<10 { try notes.put(Note(title: "\(i)")) }
        try store.pruneHistory(before: 5)
        #expect(try store.history(since: 4).map(\.sequence) == Array(5...10))
        #expect(try store.history(since: 7).map(\.sequence) == [8, 9, 10])
        #expect(throws: CellarError.self) { try store.history(since: 3) }
        #expect(throws: CellarError.self) { try store.pruneHistory(before: 12) }
        try store.pruneHistory(before: 2)  // nothing more: already pruned
        try store.pruneHistory(before: 11)
        #expect(try store.history(since: 10).isEmpty)
        #expect(throws: CellarError.self) { try store.history(since: 9) }
        try notes.put(Note(title: "after"))
        #expect(try store.history(since: 10).map(\.sequence) == [11])
        store.close()
        let reopened = try openStore(dir, options: Self.options(history: false))
        #expect(try reopened.history(since: 10).map(\.sequence) == [11])
        #expect(throws: CellarError.self) { try reopened.history(since: 9) }
    }

    @Test func compactionKeepsTheEntriesNotPruned() throws {
        let dir = TestDirectory("history-compact")
        defer { dir.remove() }
        var store = try openStore(dir, options: Self.options())
        let notes = store.box(for: Note.self)
        for i in 0..<20 { try notes.put(Note(title: String(repeating: "n", count: 200 + i))) }
        try notes.removeAll()
        try store.pruneHistory(before: 8)
        let before = try store.history(since: 7)
        #expect(before.count == 14 && before.last?.changes.count == 20)
        try store.compact()
        #expect(try store.history(since: 7) == before)
        #expect(throws: CellarError.self) { try store.history(since: 6) }
        store.close()
        store = try openStore(dir, options: Self.options(history: false))
        #expect(try store.history(since: 7) == before)
        try store.box(for: Note.self).put(Note(title: "next"))
        #expect(try store.lastHistorySequence() == 22)
    }

    @Test func withHistoryOffNothingIsWritten() throws {
        let dir = TestDirectory("history-off")
        defer { dir.remove() }
        let store = try openStore(dir, options: Self.options(history: false))
        #expect(!store.recordsHistory)
        let notes = store.box(for: Note.self)
        var note = Note(title: "a")
        try notes.put(&note)
        note.title = "b"
        try notes.put(note)
        try notes.remove(note.id)
        try store.engine.read { txn in
            #expect(try txn.tree(StorageLayout.historyTree) == nil)
            let meta = try #require(try txn.tree(StorageLayout.metaTree))
            #expect(try txn.get(meta, key: StorageLayout.historyKey) == nil)
        }
        #expect(throws: CellarError.self) { try store.history(since: 0) }
        #expect(throws: CellarError.self) { try store.pruneHistory(before: 1) }
    }

    @Test func aRolledBackTransactionAndAnUnchangedPutRecordNothing() throws {
        let dir = TestDirectory("history-rollback")
        defer { dir.remove() }
        let store = try openStore(dir, options: Self.options())
        let notes = store.box(for: Note.self)
        var note = Note(title: "a", text: "t")
        try notes.put(&note)
        #expect(throws: Boom.self) {
            try store.runInTransaction {
                try notes.put(Note(title: "lost"))
                throw Boom()
            }
        }
        try notes.put(note)  // the same bytes
        try store.runInTransaction {}
        #expect(try store.lastHistorySequence() == 1)
        note.text = nil
        try notes.put(note)
        #expect(try store.history(since: 1).map(\.changes) == [[
            HistoryChange(entityUid: Self.noteUid, entityName: "Note", id: note.id.value, operation: .put,
                          changedPropertyIds: [3], changedPropertyNames: ["text"]),
        ]])
    }

    @Test func aLargeTransactionAndRemoveAllRecordEveryObject() throws {
        let dir = TestDirectory("history-large")
        defer { dir.remove() }
        let store = try openStore(dir, options: Self.options())
        let notes = store.box(for: Note.self)
        let count = 120_000  // past ChangeLog.maximumIdsPerEntity
        let ids = try notes.put((0..<count).map { Note(title: "\($0)") })
        #expect(try notes.removeAll() == count)
        let entries = try store.history(since: 0)
        try #require(entries.count == 2)
        #expect(entries[0].changes.map(\.id) == ids.map(\.value))
        #expect(entries[0].changes.allSatisfy { $0.operation == .put && $0.changedPropertyIds == [2, 3] })
        #expect(entries[1].changes.map(\.id) == ids.map(\.value))
        #expect(entries[1].changes.allSatisfy { $0.operation == .remove })
    }

    @Test func toManyLinksAreRecordedOnTheirSource() throws {
        let dir = TestDirectory("history-relations")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options())
        let tags = ["work", "home"].map(QTag.init)
        try store.box(for: QTag.self).put(tags)
        let item = QItem()
        item.title = "tagged"
        try store.box(for: QItem.self).put(item)
        let start = try store.lastHistorySequence()
        let relation: UInt32 = 1  // QItem.tags
        item.tags.append(tags[0])
        try store.box(for: QItem.self).put(item)
        let itemUid: UInt64 = 9_100
        let linked = try store.history(since: start)
        #expect(linked.count == 1)
        #expect(linked.first?.changes == [HistoryChange(entityUid: itemUid, entityName: "QItem", id: item.id, operation: .put,
                                                         changedRelationIds: [relation])])
        // Removing the tag unlinks it from the item: the item's relation changed too.
        try store.box(for: QTag.self).remove(tags[0].id)
        let unlinked = try #require(try store.history(since: start + 1).first)
        #expect(unlinked.changes.contains(HistoryChange(entityUid: itemUid, entityName: "QItem", id: item.id, operation: .put,
                                                        changedRelationIds: [relation])))
        #expect(unlinked.changes.contains { $0.id == tags[0].id && $0.operation == .remove })
        // Removing a linked item is a removal: the links it takes with it add nothing.
        let relinked = try #require(try store.box(for: QItem.self).get(item.id))
        relinked.tags.append(tags[1])
        try store.box(for: QItem.self).put(relinked)
        let beforeRemoval = try store.lastHistorySequence()
        try store.box(for: QItem.self).remove(item.id)
        #expect(try store.history(since: beforeRemoval).map(\.changes) == [[
            HistoryChange(entityUid: itemUid, entityName: "QItem", id: item.id, operation: .remove),
        ]])
    }
}
