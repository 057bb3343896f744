import BenchSupport
@_spi(Testing) import Cellar
import Foundation

/// The CRUD workload's data and expected results for N objects, built before any timer.
struct Workload {
    /// Queries per step e, e2, e2find, e3.
    static let queries = 100
    /// Step f's commits: ids 1...1000 (fewer when N < 1000).
    static func commits(_ n: Int) -> Int { min(n, 1_000) }

    let n: Int
    /// Objects 1...N as the app holds them (id 0: not stored yet); object i at index i − 1.
    let notes: [Note]
    /// Step b's order: the CRUD workload's SplitMix64 permutation of 1...N.
    let permutation: [UInt64]
    /// i ≡ 42 (mod 100): the ids with author 42, ascending.
    let authorIds: [Int64]

    init(n: Int) {
        self.n = n
        notes = Self.fresh(n)
        permutation = randomOrder(n)
        authorIds = Array(stride(from: Int64(42), through: Int64(n), by: 100))
    }

    static let baseMs: Int64 = 1_700_000_000_000
    static let lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua."

    /// Objects 1...n as docs/crud-workload.md builds them (id 0: not stored yet); object i at index i − 1.
    static func fresh(_ n: Int) -> [Note] {
        let loremPrefix = String(lorem.prefix(85))
        var notes: [Note] = []
        notes.reserveCapacity(n)
        for i in 1...n {
            let date = DateEncoding.date(milliseconds: creationMs(i))
            let digits = nineDigits(i)
            notes.append(Note(id: 0, title: "Note title " + digits, text: "Body " + digits + " " + loremPrefix,
                              creationDate: date, modificationDate: date, author: UInt64((i - 1) % 100 + 1)))
        }
        precondition(notes[0].title.utf8.count == 20 && notes[0].text.utf8.count == 100)
        return notes
    }

    /// `%09d`.
    static func nineDigits(_ i: Int) -> String {
        let s = String(i)
        return String(repeating: "0", count: max(0, 9 - s.count)) + s
    }
    static func creationMs(_ i: Int) -> Int64 { baseMs + 1000 * Int64(i) }
    /// Σ creationDate over i = 1...N in closed form, modulo 2^64 as the engines sum it (from
    /// N ≈ 5.4M the sum passes Int64's range).
    var creationSum: Int64 {
        let n = Int64(n)
        // n (n + 1) / 2 with the halving done first, so that no intermediate overflows.
        let triangle = n % 2 == 0 ? (n / 2) &* (n + 1) : n &* ((n + 1) / 2)
        return (n &* Self.baseMs) &+ (1000 &* triangle)
    }
    /// b's and bget's checks: every object found, each title 20 bytes (`step`: e.g. `cellar b`).
    func checkGets(_ step: String, found: Int, titleBytes: Int) throws {
        try check("\(step): every object found", found == n, "\(found) of \(n)")
        try check("\(step): Σ title length == 20 N", titleBytes == 20 * n, "\(titleBytes)")
    }

    /// c's checks: N objects in id order, Σ creationDate in its closed form.
    func checkScan(_ step: String, scanned: Int, ordered: Bool, creationSum: Int64) throws {
        try check("\(step): scanned N objects", scanned == n, "\(scanned)")
        try check("\(step): ids ascending 1...N", ordered)
        try check("\(step): Σ creationDate == closed form", creationSum == self.creationSum, "\(creationSum) vs \(self.creationSum)")
    }

    /// modificationDate of object i after step d (`afterF`: and after step f).
    func modificationMs(_ i: Int, afterF: Bool) -> Int64 {
        Self.creationMs(i) + (afterF && i <= Self.commits(n) ? 120_000 : 60_000)
    }
}

func check(_ what: String, _ ok: Bool, _ detail: @autoclosure () -> String = "") throws {
    guard ok else { throw BenchError("check failed: \(what)" + { let d = detail(); return d.isEmpty ? "" : " (\(d))" }()) }
}
