import Dispatch
import Foundation
import Observation

/// A query's live results grouped into sections by a key (Realm's `SectionedResults`): what a
/// grouped list (`List { ForEach(sections) { Section(…) { ForEach($0) … } } }`) shows, kept up to
/// date with section-level change sets.
///
/// ```swift
/// let byLetter = try store.sectionedLiveQuery(query) { note in String(note.title.prefix(1)).uppercased() }
/// // byLetter.sections: [ResultsSection] in key order; each one's objects in the query's order
/// ```
///
/// Built on ``LiveResults``, with the same guarantees: each publication is one committed state,
/// published on the delivery queue, `@Observable`. Sections come in ascending key order; the
/// objects of a section keep the query's order. A section exists while it holds an object.
/// After each update the sections are made again from the results (the key computed once per
/// object: O(results) per update, on the delivery queue) and ``lastChange`` says what changed.
@Observable
public final class SectionedLiveResults<E: EntityInspectable & SendableMetatype, Key: Hashable & Comparable & Sendable>:
    @unchecked Sendable {
    /// The sections, in ascending key order.
    public private(set) var sections: [ResultsSection<E, Key>] = []
    /// What the last update changed (nil before the first result).
    public private(set) var lastChange: SectionedResultsChange?
    /// The error of the last update that failed (the sections are then those before it).
    public private(set) var error: CellarError?
    /// How many updates were published (the first result included).
    public private(set) var updateCount = 0

    @ObservationIgnored private let live: LiveResults<E>
    @ObservationIgnored private let sectionKey: (E) -> Key

    init(_ live: LiveResults<E>, queue: DispatchQueue, key: @escaping (E) -> Key) {
        self.live = live
        self.sectionKey = key
        queue.async { [weak self] in
            guard let self else { return }
            live.sectioningHook = { [weak self] change in self?.update(change) }
            live.failureHook = { [weak self] error in self?.error = error }
            // A result published before the hooks were set.
            if live.updateCount > 0, self.updateCount == 0 { self.update(.initial(live.ids)) }
        }
    }

    /// Stops the updates. Idempotent.
    public func cancel() { live.cancel() }

    /// Makes the sections of the current results and the change from the previous ones.
    private func update(_ change: ResultsChange) {
        let objects = live.results
        let ids = live.ids
        var rows: [Key: ([Id], [E])] = [:]
        for (id, object) in zip(ids, objects) {
            let key = sectionKey(object)
            rows[key, default: ([], [])].0.append(id)
            rows[key, default: ([], [])].1.append(object)
        }
        let new = rows.keys.sorted().map { ResultsSection(key: $0, ids: rows[$0]!.0, objects: rows[$0]!.1) }
        let old = sections
        sections = new
        error = nil
        updateCount += 1
        if change.isInitial || updateCount == 1 {
            lastChange = SectionedResultsChange(sectionDeletions: [], sectionInsertions: Array(new.indices), deletions: [],
                                                insertions: [], modifications: [], isInitial: true)
            return
        }
        // An object that came, left or moved may have changed (as for LiveResults' changes): in
        // its section, it counts as modified if it kept its place.
        let changed = Set(change.modifiedIds).union(change.insertedIds).union(change.deletedIds)
        let oldIndex = Dictionary(old.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { a, _ in a })
        let newIndex = Dictionary(new.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { a, _ in a })
        var result = SectionedResultsChange(sectionDeletions: old.indices.filter { newIndex[old[$0].key] == nil },
                                            sectionInsertions: new.indices.filter { oldIndex[new[$0].key] == nil },
                                            deletions: [], insertions: [], modifications: [], isInitial: false)
        for (j, section) in new.enumerated() {
            guard let i = oldIndex[section.key] else { continue }
            let rowChange = ResultsChange.between(old[i].ids, section.ids, changed: changed)
            result.deletions += rowChange.deletions.map { IndexPath(indexes: [i, $0]) }
            result.insertions += rowChange.insertions.map { IndexPath(indexes: [j, $0]) }
            result.modifications += rowChange.modifications.map { IndexPath(indexes: [j, $0]) }
        }
        lastChange = result
    }
}

/// One section of ``SectionedLiveResults``: its key and its objects, in the query's order.
public struct ResultsSection<E, Key: Hashable & Comparable & Sendable>: RandomAccessCollection, Identifiable {
    /// What every object of the section has as its key.
    public let key: Key
    /// The objects' ids, in order.
    public let ids: [Id]
    let objects: [E]

    /// The key: a section is identified by it across updates.
    public var id: Key { key }
    /// 0.
    public var startIndex: Int { 0 }
    /// The number of objects.
    public var endIndex: Int { objects.count }
    /// The object at `position`.
    public subscript(position: Int) -> E { objects[position] }
}

/// How sectioned results changed in one update, as a grouped list view applies it (Realm's
/// `SectionedResultsChange`, UIKit's batch updates): sections deleted (indices into the previous
/// sections) and inserted (indices into the new ones); for the sections in both, rows deleted
/// (index paths `[section, row]` into the previous sections), inserted and modified (index paths
/// into the new ones). The rows of a deleted or inserted section are not listed. An object that
/// moved to another section, or changed its place in its own, is deleted and inserted; every list
/// is ascending.
public struct SectionedResultsChange: Sendable, Equatable {
    /// Indices into the previous sections of the sections that went.
    public var sectionDeletions: [Int]
    /// Indices into the new sections of the sections that came.
    public var sectionInsertions: [Int]
    /// `[section, row]` into the previous sections.
    public var deletions: [IndexPath]
    /// `[section, row]` into the new sections.
    public var insertions: [IndexPath]
    /// `[section, row]` into the new sections: objects in both versions, at the same place in
    /// their section, changed since.
    public var modifications: [IndexPath]
    /// Whether this is the first result (every section inserted).
    public var isInitial: Bool

    /// Whether nothing changed.
    public var isEmpty: Bool {
        sectionDeletions.isEmpty && sectionInsertions.isEmpty && deletions.isEmpty && insertions.isEmpty && modifications.isEmpty
    }
}

extension Store {
    /// Live results of `query` grouped into sections by `key` (computed on the delivery queue,
    /// once per object and update), published on `queue`: see ``SectionedLiveResults``. A
    /// property's key path serves as the key: `sectionedLiveQuery(query, by: \.category)`. With
    /// `properties`, the key should read only those properties: a change to another one
    /// publishes nothing, so the sections would not follow it.
    public func sectionedLiveQuery<E: EntityInspectable & SendableMetatype, Key: Hashable & Comparable & Sendable>(
        _ query: Query<E>, queue: DispatchQueue = .main, properties: [Property<E>]? = nil,
        by key: @escaping (E) -> Key) throws -> SectionedLiveResults<E, Key> {
        SectionedLiveResults(try liveQuery(query, queue: queue, properties: properties), queue: queue, key: key)
    }
}
