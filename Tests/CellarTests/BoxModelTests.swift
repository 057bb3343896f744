@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// Random Box operations against an in-memory dictionary, compared after every step and after
/// every reopen: contents, counts, and that ids are handed out in order and never reused.
@Suite struct BoxModelTests {
    private struct Rollback: Error {}

    @Test func randomOperationsMatchADictionary() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let dir = TestDirectory("box-model")
        defer { dir.remove() }
        var expected: [Id: Note] = [:]
        var highestHandedOut: Id = 0
        var store: Store? = try openStore(dir)
        func random(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        func randomNote() -> Note { Note(title: "t\(rng.next() % 1000)", text: rng.next() % 3 == 0 ? nil : String(repeating: "x", count: random(300))) }
        func someStoredId() -> Id? { expected.keys.sorted().dropFirst(expected.isEmpty ? 0 : random(expected.count)).first }

        for step in 0..<1_500 {
            let box = store!.box(for: Note.self)
            switch random(100) {
            case 0..<35:
                var note = randomNote()
                let id = try box.put(&note).value
                #expect(id == highestHandedOut + 1, "seed \(seed) step \(step)")
                highestHandedOut = id
                expected[id] = note
            case 35..<50:
                guard let id = someStoredId() else { continue }
                var note = randomNote()
                note.id = EntityId(id)
                try box.put(note, mode: random(2) == 0 ? .put : .update)
                expected[id] = note
            case 50..<65:
                let id = someStoredId() ?? (highestHandedOut + 1)
                #expect(try box.remove(id) == (expected.removeValue(forKey: id) != nil), "seed \(seed) step \(step)")
            case 65..<75:
                // Several changes in one transaction, sometimes rolled back.
                let rollback = random(3) == 0
                var added: [Note] = (0..<(1 + random(5))).map { _ in randomNote() }
                var removed: [Id] = []
                do {
                    try store!.runInTransaction {
                        try box.put(&added)
                        if let id = someStoredId() {
                            try box.remove(id)
                            removed.append(id)
                        }
                        if rollback { throw Rollback() }
                    }
                    for note in added { expected[note.id.value] = note }
                    for id in removed { expected[id] = nil }
                    highestHandedOut = added.last!.id.value
                } catch is Rollback {}
            case 75..<77:
                #expect(try box.removeAll() == expected.count)
                expected = [:]
            case 77..<80:
                store!.close()
                store = try openStore(dir)
            default:
                let id = someStoredId() ?? 1
                #expect(try box.get(id) == expected[id], "seed \(seed) step \(step)")
            }
            if step % 50 == 0 || step == 1_499 {
                let box = store!.box(for: Note.self)
                #expect(try box.count() == expected.count, "seed \(seed) step \(step)")
                #expect(try box.all() == expected.keys.sorted().map { expected[$0]! }, "seed \(seed) step \(step)")
            }
        }
    }
}
