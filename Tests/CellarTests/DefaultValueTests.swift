@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// Version 1 of the generated `Reminder` (Generated/GeneratedEntities.swift): the same entity
/// with only its id and title, written through `Row`.
private enum ReminderV1: RowSchema {
    static var entity: ModelEntity {
        let current = cellarModel().entity(named: "Reminder")!
        let kept = current.properties.filter { ["id", "title"].contains($0.name) }
        return ModelEntity(name: current.name, id: current.id, lastPropertyId: kept.last!.id, properties: kept)
    }
}

/// Default values end to end: objects put with a model that lacks properties, read after the
/// store is reopened with the generated model, whose properties have initial values.
@Suite struct DefaultValueReadTests {
    /// The generated model with Reminder as it was in version 1.
    private func modelV1() -> Cellar.Model {
        var model = cellarModel()
        let index = model.entities.firstIndex { $0.name == "Reminder" }!
        model.entities[index] = ReminderV1.entity
        return model
    }

    @Test func propertiesAddedLaterReadTheirInitialValues() throws {
        let dir = TestDirectory("default-values")
        defer { dir.remove() }
        let path = dir.sub("db")
        var oldIds: [Id] = []
        do {
            let store = try Store(directoryPath: path, model: modelV1())
            let rows = store.box(for: Row<ReminderV1>.self)
            oldIds = try rows.put([Row(["title": .string("old 1")]), Row(["title": .string("old 2")])]).map(\.value)
        }
        let store = try Store(directoryPath: path, model: cellarModel())
        let reminder = try #require(store.model.entity(named: "Reminder"))
        #expect(store.modelChanges.contains(.addProperty(entity: "Reminder", property: "priority")), "\(store.modelChanges)")
        #expect(reminder.properties.map(\.name) == ["id", "title", "priority", "label", "due", "active", "ratio", "created", "count", "note", "rank", "tag"])
        let box = store.box(for: Reminder.self)
        for id in oldIds {
            let old = try #require(try box.get(id))
            #expect(old.title.hasPrefix("old "))
            #expect(old.priority == 3, "= 3, not 0")
            #expect(old.label == "x")
            #expect(old.due == Date(timeIntervalSince1970: 1_700_000_000.5))
            #expect(old.active == true)
            #expect(old.ratio == 0.25)
            #expect(old.created == ISO8601DateFormatter().date(from: "2024-01-01T00:00:00Z"), "// cellar: default")
            #expect(old.count == 0, "no initial value: zero")
            #expect(old.note == nil, "an optional reads nil, whatever it starts as")
        }
        // Stored values are read as stored, zeros included: the default is for absent fields only.
        let new = Reminder()
        new.title = "new"
        new.priority = 0
        new.label = ""
        new.active = false
        new.ratio = 0
        new.note = nil
        try box.put(new)
        let back = try #require(try box.get(new.id))
        #expect(back.priority == 0 && back.label == "" && back.active == false && back.ratio == 0 && back.note == nil)
        #expect(abs(back.created.timeIntervalSince(new.created)) < 0.001, "stored in milliseconds")
    }

    /// Queries see what reads see: a condition, an ordering and a property query over old records
    /// (without the fields) and new ones give what filtering, sorting and mapping the objects read
    /// back gives. Indexed properties: a condition the default meets scans (the index holds stored
    /// values only), one it does not meet reads the index, and both agree with the objects.
    @Test func queriesTreatAnAbsentFieldAsTheDefault() throws {
        let dir = TestDirectory("default-queries")
        defer { dir.remove() }
        let path = dir.sub("db")
        do {
            let store = try Store(directoryPath: path, model: modelV1())
            _ = try store.box(for: Row<ReminderV1>.self).put((0..<6).map { Row(["title": .string("old \($0)")]) })
        }
        let store = try Store(directoryPath: path, model: cellarModel())
        let box = store.box(for: Reminder.self)
        var rng = SplitMix64(seed: 7)
        func pick<T>(_ values: [T]) -> T { values[Int(rng.next() % UInt64(values.count))] }
        let other = Date(timeIntervalSince1970: 1_600_000_000)
        for index in 0..<40 {
            let reminder = Reminder()
            reminder.title = "new \(index)"
            reminder.priority = pick([0, 3, 5])
            reminder.label = pick(["", "x", "y"])
            reminder.due = pick([reminder.due, other])
            reminder.active = pick([true, false])
            reminder.ratio = pick([0, 0.25, 2])
            reminder.rank = pick([0, 7, 9])
            reminder.tag = pick(["x", "z"])
            try box.put(reminder)
        }
        // An old object put back: its defaults are stored now.
        try box.put(try #require(try box.get(1 as Id)))
        let objects = try box.all()
        #expect(objects.count == 46)

        let due = Date(timeIntervalSince1970: 1_700_000_000.5)
        let cases: [(String, QueryCondition<Reminder>, (Reminder) -> Bool)] = [
            ("priority == 3", Reminder.priority == 3, { $0.priority == 3 }),
            ("priority > 2", Reminder.priority > 2, { $0.priority > 2 }),
            ("priority < 3", Reminder.priority < 3, { $0.priority < 3 }),
            ("priority != 3", Reminder.priority != 3, { $0.priority != 3 }),
            ("priority.isNil()", Reminder.priority.isNil(), { _ in false }),
            ("priority.isNotNil()", Reminder.priority.isNotNil(), { _ in true }),
            ("label == \"x\"", Reminder.label == "x", { $0.label == "x" }),
            ("label.startsWith(\"x\")", Reminder.label.startsWith("x"), { $0.label.hasPrefix("x") }),
            ("label.isIn", Reminder.label.isIn(["", "x"]), { ["", "x"].contains($0.label) }),
            ("active == true", Reminder.active == true, { $0.active }),
            ("due == default", Reminder.due == due, { $0.due == due }),
            ("due < default", Reminder.due < due, { $0.due < due }),
            ("ratio == 0.25", Reminder.ratio == 0.25, { $0.ratio == 0.25 }),
            ("rank == 7 (the default: scan)", Reminder.rank == 7, { $0.rank == 7 }),
            ("rank == 9 (index)", Reminder.rank == 9, { $0.rank == 9 }),
            ("rank >= 7 (scan)", Reminder.rank >= 7, { $0.rank >= 7 }),
            ("rank < 7 (index)", Reminder.rank < 7, { $0.rank < 7 }),
            ("rank.isIn([0, 9]) (index)", Reminder.rank.isIn([Int32(0), 9]), { [0, 9].contains($0.rank) }),
            ("tag == \"x\" (the default: scan)", Reminder.tag == "x", { $0.tag == "x" }),
            ("tag == \"z\" (index)", Reminder.tag == "z", { $0.tag == "z" }),
            ("rank == 9 && priority == 3", Reminder.rank == 9 && Reminder.priority == 3, { $0.rank == 9 && $0.priority == 3 }),
            ("tag == \"z\" || active", Reminder.tag == "z" || Reminder.active == true, { $0.tag == "z" || $0.active }),
        ]
        for (name, condition, predicate) in cases {
            let query = try box.query { condition }.build()
            let expected = objects.filter(predicate).map(\.id).sorted()
            #expect(try query.findIds().map(\.value).sorted() == expected, "\(name)")
            #expect(try query.count() == expected.count, "\(name)")
            #expect(try query.find().map(\.id).sorted() == expected, "\(name)")
        }
        // The plans behind the index cases: the index where the default does not meet the condition.
        func usesIndex(_ condition: QueryCondition<Reminder>) throws -> Bool {
            let source = try box.query { condition }.build().compiled.plan.source
            if case .index = source { return true }
            return false
        }
        #expect(try usesIndex(Reminder.rank == 9) && usesIndex(Reminder.rank < 7) && usesIndex(Reminder.tag == "z"))
        #expect(try !usesIndex(Reminder.rank == 7) && !usesIndex(Reminder.rank >= 7) && !usesIndex(Reminder.tag == "x"))

        // Orderings and property queries read the defaults too.
        let byPriority = try box.query().ordered(by: Reminder.priority).build().find().map(\.priority)
        #expect(byPriority == objects.map(\.priority).sorted())
        let byLabel = try box.query().ordered(by: Reminder.label).build().find().map(\.label)
        #expect(byLabel == objects.map(\.label).sorted())
        let all = try box.query().build()
        #expect(try all.property(Reminder.priority).find(Int.self).sorted() == objects.map(\.priority).sorted())
        #expect(try all.property(Reminder.priority).sumInteger() == Int64(objects.reduce(0) { $0 + $1.priority }))
        #expect(try all.property(Reminder.rank).distinct().find(Int32.self).sorted() == Array(Set(objects.map(\.rank))).sorted())
        #expect(try all.property(Reminder.note).count() == objects.filter { $0.note != nil }.count && objects.contains { $0.note == nil },
                "an optional has no default: old records have no note")
    }

    /// Defaults are the code's own: the model file and the database's copy are unchanged by
    /// them, and a default that does not suit its property is refused.
    @Test func defaultsStayOutOfTheModelFileAndAreChecked() throws {
        let model = cellarModel()
        var plain = model
        for entity in plain.entities.indices {
            for property in plain.entities[entity].properties.indices { plain.entities[entity].properties[property].defaultValue = nil }
        }
        #expect(model == plain && model.jsonBytes() == plain.jsonBytes())
        let fileURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Generated/model-CellarTests.json")
        #expect(try Cellar.Model(json: Array(Data(contentsOf: fileURL))).jsonBytes() == model.jsonBytes())
        // A read-only open of a store made with the defaults needs no model change.
        let dir = TestDirectory("default-readonly")
        defer { dir.remove() }
        _ = try Store(directoryPath: dir.sub("db"), model: model)
        var options = StoreOptions()
        options.readOnly = true
        #expect(try Store(directoryPath: dir.sub("db"), model: model, options: options).modelChanges.isEmpty)

        func refused(_ property: String, _ value: PropertyDefault, _ fragment: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
            var wrong = model
            let entity = wrong.entities.firstIndex { $0.name == "Reminder" }!
            let index = wrong.entities[entity].properties.firstIndex { $0.name == property }!
            wrong.entities[entity].properties[index].defaultValue = value
            do {
                try wrong.validate()
                Issue.record("\(property) = \(value) was accepted", sourceLocation: sourceLocation)
            } catch let error as CellarError where error.code == .schema {
                let message = error.message
                #expect(message.contains(fragment), "\(message)", sourceLocation: sourceLocation)
            } catch {
                Issue.record("\(error)", sourceLocation: sourceLocation)
            }
        }
        refused("priority", .string("3"), "the default value string(\"3\") of property priority (Long) is not of the property's type")
        refused("rank", .integer(1 << 40), "of property rank (Int) is out of the property's range")
        refused("ratio", .floatingPoint(0.1), "is not a value a Float holds")
        refused("id", .unsigned(1), "the id and relations have no default value")
        refused("due", .date(Date.distantFuture.addingTimeInterval(1e300)), "cannot be stored")
    }
}

