@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// Undo and redo: named writes undone and done again as new commits, property by property, with
/// a later change of the same property kept; removals and creations; links; indexes; the log
/// kept across reopening; its depth; random sequences against a model.
@Suite struct UndoTests {
    static func open(_ dir: TestDirectory, depth: Int = 100) throws -> Store {
        var options = StoreOptions(durability: .none, changeHistory: true)
        options.undoDepth = depth
        return try Store(directoryPath: dir.path, model: queryModel(), options: options)
    }

    static func item(_ title: String, score: Int32? = nil) -> QItem {
        let item = QItem()
        item.title = title
        item.score = score
        return item
    }

    @Test func aNamedWriteIsUndoneAndRedone() throws {
        let dir = TestDirectory("undo-basic")
        defer { dir.remove() }
        let store = try Self.open(dir)
        defer { store.close() }
        let items = store.box(for: QItem.self)
        let item = Self.item("draft", score: 1)
        try store.write(actionName: "Create") { try items.put(item) }
        try store.write(actionName: "Rename") {
            item.title = "final"
            item.score = 2
            try items.put(item)
        }
        #expect(try store.undoActionName() == "Rename")
        #expect(try store.undo() == "Rename")
        #expect(try items.get(item.id)?.title == "draft")
        #expect(try items.get(item.id)?.score == 1)
        // The index follows: the old title is found again, the new one not.
        #expect(try items.query { QItem.title == "draft" }.build().count() == 1)
        #expect(try items.query { QItem.title == "final" }.build().count() == 0)
        #expect(try store.redoActionName() == "Rename")
        #expect(try store.undo() == "Create")
        #expect(try items.count() == 0)
        #expect(try store.undo() == nil)
        #expect(try store.redo() == "Create")
        #expect(try store.redo() == "Rename")
        #expect(try items.get(item.id)?.title == "final")
        #expect(try store.redo() == nil)
        // Undo and redo are ordinary commits: the change history has them.
        #expect(try store.history(since: 0).count == 6)
    }

    @Test func aFieldSetToNilAndAStepOfTheFirstFormatAreUndone() throws {
        let dir = TestDirectory("undo-formats")
        defer { dir.remove() }
        let store = try Self.open(dir)
        defer { store.close() }
        let items = store.box(for: QItem.self)
        let item = Self.item("kept", score: 7)
        item.text = "words"
        try store.write(actionName: "Create") { try items.put(item) }
        // A replace kept as it happened (an entry of kind 4): one field to nil, one from nil.
        try store.write(actionName: "Clear") {
            item.score = nil
            item.amount = 2.5
            try items.put(item)
        }
        #expect(try store.undo() == "Clear")
        #expect(try items.get(item.id)?.score == 7)
        #expect(try items.get(item.id)?.amount == nil)
        #expect(try store.redo() == "Clear")
        #expect(try items.get(item.id)?.score == nil)
        #expect(try items.get(item.id)?.amount == 2.5)
        // The same step as the first format wrote it (records of the fields, kind 3), and as the
        // second did (fields with u32 lengths, kind 4), still reads.
        for format in [1, 2] as [UInt8] {
            try store.runInTransaction {
                let context = ThreadTransactions.current(for: store)!
                let step = try #require(try UndoLog.step(2, in: context))
                let schema = try #require(store.schemas.values.first { $0.name == "QItem" })
                let older = try Self.bytes(of: step, format: format, schema: schema)
                let steps = try #require(try context.write!.tree(UndoLog.tree, create: false))
                try context.write!.put(steps, key: UndoLog.key(2), value: older)
            }
            #expect(try store.undoActionName() == "Clear")
            #expect(try store.undo() == "Clear")
            #expect(try items.get(item.id)?.score == 7)
            #expect(try items.get(item.id)?.amount == nil)
            #expect(try items.get(item.id)?.text == "words")
            #expect(try store.redo() == "Clear")
            #expect(try items.get(item.id)?.score == nil)
            #expect(try items.get(item.id)?.amount == 2.5)
        }
    }

    /// `step` as formats 1 and 2 stored it: the entity UID and id before the kind; a replaced
    /// object as records of its fields (kind 3) in format 1, as its fields with u32 lengths and a
    /// u64 slot mask (kind 4) in format 2.
    static func bytes(of step: UndoStep, format: UInt8, schema: EntitySchema) throws -> [UInt8] {
        var out: [UInt8] = [format]
        func u32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { out.append(contentsOf: $0) } }
        func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) } }
        u32(step.name.utf8.count)
        out.append(contentsOf: step.name.utf8)
        u32(step.objects.count)
        for object in step.objects {
            #expect(object.links.isEmpty, "the helper writes no links")
            u64(object.entityUid)
            u64(object.id)
            if format == 2, let before = object.before, let after = object.after {
                out.append(4)
                u64(object.changed.reduce(UInt64(0)) { $0 | 1 << UInt64($1 - 1) })
                for property in object.changed {
                    let slot = Int(property) - 1, width = schema.slotWidths[slot]
                    for record in [before, after] {
                        let field = try record.withUnsafeBytes { raw -> [UInt8]? in
                            let reader = try RecordReader(raw)
                            if width > 0 { return try reader.offset(slot, size: width).map { Array(raw[$0..<($0 + width)]) } }
                            return try reader.field(slot: slot).map { Array($0) }
                        }
                        if let field {
                            u32(field.count)
                            out += field
                        } else {
                            out += [0xFF, 0xFF, 0xFF, 0xFF]
                        }
                    }
                }
            } else {
                out.append((object.before == nil ? 0 : 1) | (object.after == nil ? 0 : 2))
                if object.before != nil, object.after != nil {
                    u32(object.changed.count)
                    for id in object.changed { u32(Int(id)) }
                }
                for record in [object.before, object.after] {
                    guard let record else { continue }
                    u32(record.count)
                    out += record
                }
            }
            u32(0)  // no relation
        }
        return out
    }

    @Test func aGroupOfWritesIsOneStep() throws {
        let dir = TestDirectory("undo-group")
        defer { dir.remove() }
        let store = try Self.open(dir)
        defer { store.close() }
        let items = store.box(for: QItem.self)
        let item = Self.item("start", score: 1)
        try store.write(actionName: "Create") { try items.put(item) }
        let other = Self.item("other")
        try store.undoGroup(actionName: "Drag") {
            for step in 2...5 {
                try store.write(actionName: "move \(step)") {
                    item.score = Int32(step)
                    try items.put(item)
                }
            }
            try store.write(actionName: "add") { try items.put(other) }
        }
        #expect(try store.undoActionName() == "Drag")
        #expect(try store.undo() == "Drag")
        #expect(try items.get(item.id)?.score == 1)
        #expect(try items.get(other.id) == nil)
        #expect(try store.undoActionName() == "Create")
        #expect(try store.redo() == "Drag")
        #expect(try items.get(item.id)?.score == 5)
        #expect(try items.get(other.id)?.title == "other")
        // A group that changes nothing in the end leaves no step; groups do not nest.
        try store.undoGroup(actionName: "Nothing") {
            try store.write(actionName: "there") { item.title = "x"; try items.put(item) }
            try store.write(actionName: "and back") { item.title = "start"; try items.put(item) }
        }
        #expect(try store.undoActionName() == "Drag")
        #expect(throws: CellarError.self) { try store.undoGroup(actionName: "outer") { try store.undoGroup(actionName: "inner") {} } }
        // What the body committed before it threw is kept as the group's step.
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.undoGroup(actionName: "Half") {
                try store.write(actionName: "first") { item.score = 9; try items.put(item) }
                throw Stop()
            }
        }
        #expect(try store.undo() == "Half")
        #expect(try items.get(item.id)?.score == 5)
    }

    @Test func aLaterChangeOfAnotherPropertySurvivesAndOfTheSamePropertyWins() throws {
        let dir = TestDirectory("undo-conflict")
        defer { dir.remove() }
        let store = try Self.open(dir)
        defer { store.close() }
        let items = store.box(for: QItem.self)
        let item = Self.item("a", score: 1)
        try items.put(item)
        try store.write(actionName: "Edit") {
            item.title = "b"
            item.score = 2
            try items.put(item)
        }
        // Another writer, later: the score again, and the flag.
        let other = try #require(try items.get(item.id))
        other.score = 3
        other.flag = true
        try items.put(other)
        try store.undo()
        let undone = try #require(try items.get(item.id))
        #expect(undone.title == "a")
        #expect(undone.score == 3)
        #expect(undone.flag)
    }

    @Test func aRemovalIsUndoneWithItsLinksAndACreationIsRemoved() throws {
        let dir = TestDirectory("undo-remove")
        defer { dir.remove() }
        let store = try Self.open(dir)
        defer { store.close() }
        let items = store.box(for: QItem.self), tags = store.box(for: QTag.self), authors = store.box(for: QAuthor.self)
        let (red, blue) = (QTag("red"), QTag("blue"))
        try tags.put([red, blue])
        let ada = QAuthor("ada")
        try authors.put(ada)
        let item = Self.item("tagged", score: 5)
        item.author.target = ada
        item.tags.append(contentsOf: [red, blue])
        try items.put(item)
        try store.write(actionName: "Remove") { _ = try items.remove(item.id) }
        #expect(try items.count() == 0)
        try store.undo()
        let back = try #require(try items.get(item.id))
        #expect(back.title == "tagged" && back.score == 5)
        #expect(back.author.targetId == ada.id)
        #expect(Set(back.tags.map(\.label)) == ["red", "blue"])
        #expect(try items.query { QItem.score == 5 }.build().count() == 1)
        #expect(Set(try #require(try tags.get(red.id)).items.map(\.id)) == [item.id])
        try store.redo()
        #expect(try items.count() == 0)
        #expect(try #require(try tags.get(red.id)).items.isEmpty)
    }

    @Test func theLogOutlivesReopeningAndKeepsItsDepth() throws {
        let dir = TestDirectory("undo-reopen")
        defer { dir.remove() }
        var store = try Self.open(dir, depth: 3)
        var items = store.box(for: QItem.self)
        let item = Self.item("v0")
        try items.put(item)
        for version in 1...5 {
            try store.write(actionName: "v\(version)") {
                item.title = "v\(version)"
                try items.put(item)
            }
        }
        store.close()
        store = try Self.open(dir, depth: 3)
        defer { store.close() }
        items = store.box(for: QItem.self)
        #expect(try store.undo() == "v5")
        #expect(try store.undo() == "v4")
        #expect(try store.undo() == "v3")
        #expect(try store.undo() == nil)
        #expect(try items.get(item.id)?.title == "v2")
        // A new write drops what could have been redone.
        try store.write(actionName: "other") {
            item.title = "other"
            try items.put(item)
        }
        #expect(try store.redo() == nil)
        #expect(try store.undo() == "other")
        #expect(try items.get(item.id)?.title == "v2")
        try store.clearUndoLog()
        #expect(try store.undoActionName() == nil && store.redoActionName() == nil)
    }

    @Test func undoableWritesNeedTheHistoryAndNoOuterTransaction() throws {
        let dir = TestDirectory("undo-refused")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.path, model: queryModel(), options: StoreOptions(durability: .none))
        #expect(throws: CellarError.self) { try store.write(actionName: "x") {} }
        store.close()
        let other = TestDirectory("undo-refused-history")
        defer { other.remove() }
        let history = try Self.open(other)
        defer { history.close() }
        #expect(throws: CellarError.self) { try history.runInTransaction { try history.write(actionName: "x") {} } }
        #expect(throws: CellarError.self) { try history.runInTransaction { try history.undo() } }
        #expect(throws: CellarError.self) { try history.runInTransaction { try history.undoActionName() } }
    }

    @Test func aStepCutShortInItsHeadIsAClearError() throws {
        let dir = TestDirectory("undo-cut")
        defer { dir.remove() }
        let store = try Self.open(dir)
        defer { store.close() }
        let items = store.box(for: QItem.self)
        try store.write(actionName: "Create") { try items.put(Self.item("one", score: 1)) }
        /// Step 1 as stored, after putting `bytes` in its place when given.
        func step(replacedBy bytes: [UInt8]? = nil) throws -> [UInt8] {
            try store.runInTransaction {
                let write = ThreadTransactions.current(for: store)!.write!
                let steps = try #require(try write.tree(UndoLog.tree, create: false))
                if let bytes { try write.put(steps, key: UndoLog.key(1), value: bytes) }
                return try #require(try write.get(steps, key: UndoLog.key(1)))
            }
        }
        let whole = try step()
        // Cut inside the name's length, inside the name, and a format this build does not know.
        for bytes in [Array(whole[0..<3]), Array(whole[0..<7]), [9] + whole.dropFirst(), []] {
            _ = try step(replacedBy: bytes)
            #expect { try store.undoActionName() } throws: { ($0 as? CellarError)?.code == .fileCorrupt }
            #expect(throws: CellarError.self) { try store.undo() }
        }
        _ = try step(replacedBy: whole)
        #expect(try store.undoActionName() == "Create")
        #expect(try store.undo() == "Create")
        #expect(try items.count() == 0)
    }

    // MARK: Random sequences against a model

    /// An item as the model holds it.
    struct Shape: Equatable {
        var title: String
        var score: Int32?
        var flag: Bool
        var tags: Set<Id>
    }

    /// A step as the model keeps it: each changed item before and after (nil: not there).
    typealias ModelStep = [Id: (before: Shape?, after: Shape?)]

    /// Applies `step` backwards (`reverse`) or forwards to `state`, by the documented rule;
    /// returns the number of properties kept because they changed since.
    @discardableResult
    static func apply(_ step: ModelStep, reverse: Bool, to state: inout [Id: Shape]) -> Int {
        var kept = 0
        for (id, sides) in step {
            let (found, wanted) = reverse ? (sides.after, sides.before) : (sides.before, sides.after)
            switch (found, wanted) {
            case (nil, nil): break
            case (_, nil): state[id] = nil
            case (nil, let values?):
                if state[id] == nil { state[id] = Shape(title: values.title, score: values.score, flag: values.flag, tags: []) }
            case (let left?, let values?):
                guard var current = state[id] else { break }
                if left.title != values.title { if current.title == left.title { current.title = values.title } else { kept += 1 } }
                if left.score != values.score { if current.score == left.score { current.score = values.score } else { kept += 1 } }
                if left.flag != values.flag { if current.flag == left.flag { current.flag = values.flag } else { kept += 1 } }
                state[id] = current
            }
        }
        for (id, sides) in step {
            guard var current = state[id] else { continue }
            let found = (reverse ? sides.after : sides.before)?.tags ?? [], wanted = (reverse ? sides.before : sides.after)?.tags ?? []
            current.tags.subtract(found.subtracting(wanted))
            current.tags.formUnion(wanted.subtracting(found))
            state[id] = current
        }
        return kept
    }

    @Test(arguments: [1, 2, 3, UInt64.random(in: 4...UInt64.max)] as [UInt64])
    func randomWritesUndosAndRedosMatchAModel(seed: UInt64) throws {
        let dir = TestDirectory("undo-random")
        defer { dir.remove() }
        var random = SplitMix64(seed: seed)
        func roll(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        var store = try Self.open(dir)
        defer { store.close() }
        var tagIds: [Id] = []
        try store.box(for: QTag.self).put((0..<4).map { QTag("t\($0)") })
        tagIds = try store.box(for: QTag.self).all().map(\.id)
        var model: [Id: Shape] = [:]
        var steps: [(name: String, step: ModelStep)] = []
        var top = 0
        var undone = 0, kept = 0
        func read() throws -> [Id: Shape] {
            var shapes: [Id: Shape] = [:]
            for item in try store.box(for: QItem.self).all() {
                shapes[item.id] = Shape(title: item.title, score: item.score, flag: item.flag, tags: Set(item.tags.map(\.id)))
            }
            return shapes
        }
        func edit(_ items: Box<QItem>) throws {
            let existing = try items.all()
            switch existing.count < 3 ? 0 : roll(6) {
            case 0:
                let item = Self.item("n\(roll(1000))", score: roll(2) == 0 ? nil : Int32(roll(5)))
                if roll(2) == 0 { item.tags.append(try #require(try store.box(for: QTag.self).get(tagIds[roll(4)]))) }
                try items.put(item)
            case 1, 2:
                guard let item = existing.randomElement(using: &random) else { return }
                item.title = "r\(roll(1000))"
                try items.put(item)
            case 3:
                guard let item = existing.randomElement(using: &random) else { return }
                item.score = roll(3) == 0 ? nil : Int32(roll(5))
                try items.put(item)
            case 4:
                guard let item = existing.randomElement(using: &random) else { return }
                let tag = try #require(try store.box(for: QTag.self).get(tagIds[roll(4)]))
                if item.tags.contains(where: { $0.id == tag.id }) { item.tags.removeAll { $0.id == tag.id } } else { item.tags.append(tag) }
                try items.put(item)
            default:
                guard let item = existing.randomElement(using: &random) else { return }
                _ = try items.remove(item.id)
            }
        }
        for operation in 0..<300 {
            if operation % 100 == 99 {
                store.close()
                store = try Self.open(dir)
            }
            if operation % 100 == 49 {
                // Steps that name their commits get their values before the copy drops those.
                try store.compact()
            }
            let items = store.box(for: QItem.self)
            switch roll(10) {
            case 0..<4:
                let name = "w\(operation)"
                let before = model
                if roll(3) == 0 {
                    // A group of undoable writes: one step, the difference over the group.
                    try store.undoGroup(actionName: name) {
                        for inner in 0...roll(3) {
                            try store.write(actionName: "\(name).\(inner)") {
                                for _ in 0...roll(2) { try edit(items) }
                            }
                        }
                    }
                } else {
                    try store.write(actionName: name) {
                        for _ in 0...roll(3) { try edit(items) }
                    }
                }
                let after = try read()
                var step: ModelStep = [:]
                for id in Set(before.keys).union(after.keys) where before[id] != after[id] { step[id] = (before[id], after[id]) }
                model = after
                if !step.isEmpty {
                    steps.removeSubrange(top...)
                    steps.append((name, step))
                    top = steps.count
                }
            case 4, 5:
                // Another writer, not undoable: the flag, title or score of an item, often one the
                // step to undo next changed (so that undo meets values changed since).
                // (The keys in id order: a dictionary's order changes from one process to the next,
                // and the seed must replay the same sequence.)
                let candidates = top > 0 && roll(3) > 0 ? try steps[top - 1].step.keys.sorted().compactMap { try items.get($0) } : try items.all()
                guard let item = candidates.randomElement(using: &random) else { continue }
                switch roll(3) {
                case 0: item.flag.toggle()
                case 1: item.title = "o\(roll(1000))"
                default: item.score = Int32(roll(5) + 10)
                }
                try items.put(item)
                model = try read()
            case 6, 7, 8:
                let name = try store.undo()
                #expect(name == (top > 0 ? steps[top - 1].name : nil), "seed \(seed), operation \(operation)")
                if top > 0 {
                    kept += Self.apply(steps[top - 1].step, reverse: true, to: &model)
                    top -= 1
                    undone += 1
                }
            default:
                let name = try store.redo()
                #expect(name == (top < steps.count ? steps[top].name : nil), "seed \(seed), operation \(operation)")
                if top < steps.count {
                    kept += Self.apply(steps[top].step, reverse: false, to: &model)
                    top += 1
                }
            }
            let actual = try read()
            #expect(actual == model, "seed \(seed), operation \(operation)")
            if actual != model { return }
        }
        // The sequences of the fixed seeds undo enough, and meet the rule for values changed
        // since (a random seed's may not).
        if seed <= 3 {
            #expect(undone >= 20, "seed \(seed)")
            #expect(kept >= 1, "seed \(seed)")
        }
    }
}
