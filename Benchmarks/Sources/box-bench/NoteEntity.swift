import BenchNote
import BenchSupport
@_spi(Testing) import Cellar
import Foundation

// `Note` and its binding: BenchNote (shared with query-bench); here `Note.model`, without the
// author index: neither way maintains one.

/// Everything the steps are given, built before any timer: the objects (as the app already holds
/// them), their updated versions, the random order of the gets and the ids to remove.
final class NoteWorkload {
    let n: Int
    /// How many single-object write transactions step put1 makes (objects 1...singles).
    let singles: Int
    /// New objects (id 0); object i (1...n) at index i − 1.
    let fresh: [Note]
    /// Step update's objects: ids set, modificationDate = creationDate + 60 s.
    let updated: [Note]
    /// Step put1's objects (ids 1...singles): modificationDate = creationDate + 120 s.
    let single: [Note]
    /// 1...n in the CRUD workload's random order.
    let permutation: [Id]
    /// 1...n, for remove.
    let ids: [Id]
    /// Σ creationDate in ms over all objects.
    let creationSum: Int64

    init(n: Int, singles: Int) {
        precondition(n >= 1 && singles >= 1 && singles <= n)
        self.n = n
        self.singles = singles
        let fresh = Note.fresh(n)
        self.fresh = fresh
        updated = fresh.indices.map { k in Self.modified(fresh[k], id: Id(k + 1), byMs: 60_000) }
        single = (0..<singles).map { k in Self.modified(fresh[k], id: Id(k + 1), byMs: 120_000) }
        permutation = randomOrder(n)
        ids = (1...n).map { Id($0) }
        creationSum = Int64(n) * Note.baseMs + 1000 * Int64(n) * Int64(n + 1) / 2
    }

    static func modified(_ note: Note, id: Id, byMs: Int64) -> Note {
        var copy = note
        copy.id = id
        copy.modificationDate = DateEncoding.date(milliseconds: milliseconds(note.creationDate) + byMs)
        return copy
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// Object `id` as step put stored it.
    func afterPut(_ id: Id) -> Note {
        var note = fresh[Int(id) - 1]
        note.id = id
        return note
    }

    /// Object `id` as it must read once update and put1 ran.
    func final(_ id: Id) -> Note {
        Int(id) <= singles ? single[Int(id) - 1] : updated[Int(id) - 1]
    }
}
