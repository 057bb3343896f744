@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Dispatch
import Foundation
import Testing

/// Sectioned live results (`store.sectionedLiveQuery`): sections in key order equal to grouping a
/// fresh query's results, and each change, applied to the previous sections, gives the new ones.
@Suite struct SectionedLiveResultsTests {
    /// The ids per section key after applying `change` to `old` (the new sections' rows are taken
    /// from `new` only where the change says they were inserted).
    static func apply(_ change: SectionedResultsChange, to old: [(key: String, ids: [Id])],
                      new: [(key: String, ids: [Id])]) -> [(key: String, ids: [Id])] {
        var kept: [(key: String, ids: [Id])] = []
        for (i, section) in old.enumerated() where !change.sectionDeletions.contains(i) {
            let gone = Set(change.deletions.filter { $0[0] == i }.map { $0[1] })
            kept.append((section.key, section.ids.enumerated().filter { !gone.contains($0.offset) }.map(\.element)))
        }
        var result = kept
        for j in change.sectionInsertions.sorted() { result.insert(new[j], at: j) }
        for path in change.insertions.sorted(by: { ($0[0], $0[1]) < ($1[0], $1[1]) }) {
            result[path[0]].ids.insert(new[path[0]].ids[path[1]], at: path[1])
        }
        return result
    }

    @Test func sectionsFollowRandomCommitsExactly() async throws {
        let store = try Store(directoryPath: "memory:sectioned", model: standardModel)
        defer { store.close() }
        let notes = store.box(for: Note.self)
        let query = try notes.query { Note.titleProperty != "skip" }.ordered(by: Note.titleProperty).build()
        let queue = DispatchQueue(label: "test.sectioned")
        let sectioned = try store.sectionedLiveQuery(query, queue: queue) { String($0.title.prefix(1)) }
        #expect(await eventually { queue.sync { sectioned.updateCount == 1 } })
        queue.sync { #expect(sectioned.sections.isEmpty && sectioned.lastChange?.isInitial == true) }
        var updates = 0
        var random = SplitMix64(seed: 52)
        var stored: [Id] = []
        var previous: [(key: String, ids: [Id])] = []
        for round in 0..<60 {
            let count = queue.sync { sectioned.updateCount }
            var written: Set<Id> = []
            try store.runInTransaction {
                for _ in 0..<(1 + Int(random.next() % 3)) {
                    let letter = ["a", "b", "c", "d"][Int(random.next() % 4)]
                    let title = "\(letter)\(random.next() % 50)"
                    switch random.next() % 3 {
                    case 0 where !stored.isEmpty:
                        let id = stored.remove(at: Int(random.next() % UInt64(stored.count)))
                        try notes.remove(id)
                    case 1 where !stored.isEmpty:
                        let id = stored[Int(random.next() % UInt64(stored.count))]
                        try notes.put(Note(id: EntityId(id), title: title))
                        written.insert(id)
                    default:
                        let id = try notes.put(Note(title: title)).value
                        stored.append(id)
                        written.insert(id)
                    }
                }
            }
            // Wait until the sections show this commit (an event, not a pause): a commit that
            // rewrote an object as it was may publish nothing.
            let expected = try Dictionary(grouping: query.find(), by: { String($0.title.prefix(1)) })
                .map { (key: $0.key, ids: $0.value.map { $0.id.value }) }.sorted { $0.key < $1.key }
            func current() -> [(key: String, ids: [Id])] { sectioned.sections.map { (key: $0.key, ids: $0.ids) } }
            #expect(await eventually {
                queue.sync { current().map(\.key) == expected.map(\.key) && current().map(\.ids) == expected.map(\.ids) }
            }, "round \(round)")
            queue.sync {
                let now = current()
                #expect(zip(sectioned.sections, now).allSatisfy { section, plain in section.map { $0.id.value } == plain.ids })
                if sectioned.updateCount > count, let change = sectioned.lastChange, !change.isInitial {
                    #expect(sectioned.updateCount == count + 1, "round \(round): one commit, one update")
                    let applied = Self.apply(change, to: previous, new: now)
                    #expect(applied.map(\.key) == now.map(\.key) && applied.map(\.ids) == now.map(\.ids), "round \(round): \(change)")
                    for path in change.modifications { #expect(written.contains(now[path[0]].ids[path[1]]), "round \(round)") }
                }
                previous = now
                updates = sectioned.updateCount
            }
        }
        #expect(updates > 40)
        sectioned.cancel()
    }
}
