import BenchNote
import BenchSupport
import Cellar
import Foundation

/// What one of the timed commits does.
enum Kind: UInt8 {
    /// `box.put` of an existing object with author ≤ 50 (in the primary query), author unchanged.
    case updateIn
    /// `box.put` of an existing object with author > 50 (outside the primary query), author unchanged.
    case updateOut
    /// `box.put` of a new object, author uniform in 1...100.
    case insert
    /// `box.remove` of an existing object, in or outside the primary query alike.
    case remove
}

/// One commit of the plan: its kind, the object it puts (nil for a remove), the id it updates or
/// removes (0 for an insert: the store assigns it) and the object's author.
struct Commit {
    let kind: Kind
    let note: Note?
    let id: Id
    let author: UInt64
}

/// Live query `q`'s condition: even q author ≤ 50 (the primary query), odd q author > 50; each
/// matches half of the objects.
func matches(_ author: UInt64, query q: Int) -> Bool {
    q % 2 == 0 ? author <= 50 : author > 50
}

/// The commits, from SplitMix64 seeded with `seed`: 35 % updates of objects in the primary query,
/// 35 % updates outside it, 15 % inserts, 15 % removes. Every existing object is updated or
/// removed at most once, so that an update published for an object belongs to one commit.
func makePlan(n: Int, commits: Int, seed: UInt64, fresh: [Note]) throws -> [Commit] {
    var rng = SplitMix64(state: seed)
    // Ids 1...n; object i has author ((i − 1) % 100) + 1.
    var inPool: [Id] = [], outPool: [Id] = []
    for i in 1...n { if fresh[i - 1].author <= 50 { inPool.append(Id(i)) } else { outPool.append(Id(i)) } }
    func take(_ pool: inout [Id]) throws -> Id {
        guard !pool.isEmpty else { throw BenchError("--commits \(commits) is too many for --n \(n): every object is updated or removed at most once") }
        let k = Int(rng.next() % UInt64(pool.count))
        pool.swapAt(k, pool.count - 1)
        return pool.removeLast()
    }
    var plan: [Commit] = []
    plan.reserveCapacity(commits)
    for k in 0..<commits {
        let roll = rng.next() % 100
        switch roll {
        case 0..<70:
            let id = try roll < 35 ? take(&inPool) : take(&outPool)
            var note = fresh[Int(id) - 1]
            note.id = id
            note.text = "Edited " + Note.nineDigits(k) + String(note.text.dropFirst(16))
            note.modificationDate = note.creationDate.addingTimeInterval(90)
            plan.append(Commit(kind: roll < 35 ? .updateIn : .updateOut, note: note, id: id, author: note.author))
        case 70..<85:
            let i = n + k + 1
            let author = rng.next() % 100 + 1
            let date = Date(timeIntervalSince1970: Double(Note.baseMs + 1000 * Int64(i)) / 1000)
            let digits = Note.nineDigits(i)
            let note = Note(title: "Note title " + digits, text: "Body " + digits + " " + String(Note.lorem.prefix(85)),
                            creationDate: date, modificationDate: date, author: author)
            plan.append(Commit(kind: .insert, note: note, id: 0, author: author))
        default:
            let id = try rng.next() % 2 == 0 ? take(&inPool) : take(&outPool)
            plan.append(Commit(kind: .remove, note: nil, id: id, author: fresh[Int(id) - 1].author))
        }
    }
    return plan
}
