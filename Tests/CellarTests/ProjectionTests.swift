@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport
import Foundation
import Testing

/// Reminder with only its id and title, as in version 1 of the entity, written through `Row`.
private enum ReminderTitleOnly: RowSchema {
    static var entity: ModelEntity {
        let current = cellarModel().entity(named: "Reminder")!
        let kept = current.properties.filter { ["id", "title"].contains($0.name) }
        return ModelEntity(name: current.name, id: current.id, lastPropertyId: kept.last!.id, properties: kept)
    }
}

/// Projections (`TicketRow`, `CommentRow`, `ReminderRow` in Generated/GeneratedEntities.swift)
/// through their generated bindings: they read what the entity binding reads.
@Suite struct ProjectionTests {
    /// What `TicketRow` should hold for a ticket read in full.
    private static func row(_ ticket: Ticket) -> TicketRow {
        TicketRow(id: EntityId(ticket.id), title: ticket.title, level: ticket.priority, temperature: ticket.temperature,
                  count: ticket.count, due: ticket.due)
    }

    private static func putTickets(_ store: Store, _ count: Int) throws -> Box<Ticket> {
        let box = store.box(for: Ticket.self)
        let priorities: [Priority] = [.unknown, .low, .high]
        for i in 0..<count {
            let ticket = Ticket()
            ticket.title = "ticket \(i)"
            ticket.priority = priorities[i % 3]
            ticket.temperature = Temperature(celsius: Double(i) - 2.5)
            ticket.count = UInt16(i * 7)
            ticket.due = i % 2 == 0 ? nil : Date(timeIntervalSince1970: Double(i) * 1000)
            try box.put(ticket)
        }
        return box
    }

    @Test func findAsEqualsMappingTheFullObjects() throws {
        let store = try Store(directoryPath: "memory:projection-find", model: cellarModel())
        let box = try Self.putTickets(store, 30)
        let all = try box.query().build()
        let rows = try all.find(as: TicketRow.self)
        #expect(rows.count == 30)
        let mapped = try all.find().map(Self.row)
        #expect(rows == mapped)

        // A condition, an order, offset and limit: the same objects as find() gives.
        let query = try box.query { Ticket.count > 50 }.ordered(by: Ticket.count, flags: .descending).build()
        #expect(try query.find(as: TicketRow.self) == query.find().map(Self.row))
        #expect(try query.find(as: TicketRow.self, offset: 3, limit: 4) == query.find(offset: 3, limit: 4).map(Self.row))
        #expect(try query.find(as: TicketRow.self, offset: 3, limit: 4).count == 4)
        #expect(try query.find(as: TicketRow.self, offset: 100, limit: nil).isEmpty)
    }

    @Test func getAsReadsOneObject() throws {
        let store = try Store(directoryPath: "memory:projection-get", model: cellarModel())
        let box = try Self.putTickets(store, 5)
        for ticket in try box.all() {
            #expect(try box.get(ticket.id, as: TicketRow.self) == Self.row(ticket))
            #expect(try box.get(EntityId<Ticket>(ticket.id), as: TicketRow.self) == Self.row(ticket))
        }
        #expect(try box.get(999, as: TicketRow.self) == nil)
        // In a transaction too, where it sees the transaction's own writes.
        try store.runInTransaction {
            let ticket = Ticket()
            ticket.title = "inside"
            let id = try box.put(ticket)
            #expect(try box.get(id.value, as: TicketRow.self)?.title == "inside")
        }
    }

    @Test func toOneFieldsReadTheTargetIdAndAttach() throws {
        let store = try Store(directoryPath: "memory:projection-toone", model: cellarModel())
        let ticket = Ticket()
        ticket.title = "target"
        try store.box(for: Ticket.self).put(ticket)
        let comments = store.box(for: Comment.self)
        let comment = Comment(text: "about it")
        comment.ticket.target = ticket
        let commentId = try comments.put(comment)
        try comments.put(Comment(text: "about nothing"))
        let rows = try comments.query().build().find(as: CommentRow.self)
        #expect(rows.map(\.id) == [commentId.value, commentId.value + 1])
        #expect(rows.map(\.ticketId) == [ticket.id, 0])
        #expect(rows[0].ticket.targetId == ticket.id)
        #expect(rows[0].ticket.target?.title == "target", "attached: the target is read from the store")
        #expect(rows[1].ticket.target == nil)
        #expect(try comments.get(commentId.value, as: CommentRow.self)?.ticket.target?.title == "target")
    }

    @Test func oldRecordsReadTheDefaultsAsTheEntityDoes() throws {
        let dir = TestDirectory("projection-defaults")
        defer { dir.remove() }
        let path = dir.sub("db")
        var oldIds: [Id] = []
        do {
            var model = cellarModel()
            let index = model.entities.firstIndex { $0.name == "Reminder" }!
            model.entities[index] = ReminderTitleOnly.entity
            let store = try Store(directoryPath: path, model: model)
            oldIds = try store.box(for: Row<ReminderTitleOnly>.self).put([Row(["title": .string("old")])]).map(\.value)
        }
        let store = try Store(directoryPath: path, model: cellarModel())
        let box = store.box(for: Reminder.self)
        let full = try #require(try box.get(oldIds[0]))
        let row = try #require(try box.get(oldIds[0], as: ReminderRow.self))
        #expect(row == ReminderRow(title: "old", priority: 3, created: ISO8601DateFormatter().date(from: "2024-01-01T00:00:00Z")!, note: nil))
        #expect(row == ReminderRow(title: full.title, priority: full.priority, created: full.created, note: full.note))
    }

    @Test func changesAsEmitsAfterACommit() async throws {
        let store = try Store(directoryPath: "memory:projection-changes", model: cellarModel())
        let box = try Self.putTickets(store, 2)
        let query = try box.query().build()
        var iterator = try query.changes(as: TicketRow.self).makeAsyncIterator()
        #expect(try await iterator.next()?.map(\.title) == ["ticket 0", "ticket 1"], "the current result, at once")
        let writer = Task.detached {
            try await Task.sleep(nanoseconds: 100_000_000)
            let ticket = Ticket()
            ticket.title = "new"
            try box.put(ticket)
        }
        let next = try await iterator.next()
        #expect(next?.map(\.title) == ["ticket 0", "ticket 1", "new"])
        let expected = try query.find().map(Self.row)
        #expect(next == expected)
        try await writer.value
    }
}
