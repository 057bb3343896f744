@testable import Cellar
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
        #expect(reminder.properties.map(\.name) == ["id", "title", "priority", "label", "due", "active", "ratio", "created", "count", "note"])
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
}
