@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// Conditions by case on properties stored converted (`ConvertedProperty`): an enum by its raw
/// value, a type through its converter, with the generated Ticket and OrderLine; the stored values
/// keep working.
@Suite struct EnumConditionTests {
    @Test func conditionsTakeCasesAndStoredValuesAlike() throws {
        let dir = TestDirectory("enum-conditions")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.sub("db"), model: cellarModel())
        defer { store.close() }
        let box: Box<Ticket> = store.box()
        var rng = SplitMix64(seed: SplitMix64.testSeed())
        let priorities: [Priority] = [.unknown, .low, .high]
        let moods: [Mood?] = [nil, .calm, .busy]
        let temperatures = [Temperature(celsius: -3.5), Temperature(celsius: 20), Temperature(celsius: 37)]
        let tickets = (0..<300).map { _ in
            let ticket = Ticket()
            ticket.priority = priorities.randomElement(using: &rng)!
            ticket.mood = moods.randomElement(using: &rng)!
            ticket.temperature = temperatures.randomElement(using: &rng)!
            return ticket
        }
        try box.put(tickets)
        func ids(_ test: (Ticket) -> Bool) -> [Id] { tickets.filter(test).map(\.id) }
        func found(_ condition: QueryCondition<Ticket>) throws -> [Id] { try box.query { condition }.build().findIds().map(\.value) }

        #expect(try found(Ticket.priority == .high) == ids { $0.priority == .high })
        #expect(try found(Ticket.priority != .low) == ids { $0.priority != .low })
        #expect(try found(Ticket.priority.isIn([.low, .high])) == ids { $0.priority != .unknown })
        #expect(try found(Ticket.priority.isNotIn([.unknown])) == ids { $0.priority != .unknown })
        // The stored value works as before, and the two agree.
        #expect(try found(Ticket.priority == Priority.high.rawValue) == found(Ticket.priority == .high))
        #expect(try found(Ticket.priority > 0) == ids { $0.priority != .unknown })
        // An optional enum: a case, and nil.
        #expect(try found(Ticket.mood == .busy) == ids { $0.mood == .busy })
        #expect(try found(Ticket.mood.isNil()) == ids { $0.mood == nil })
        #expect(try found(Ticket.mood == .calm || Ticket.priority == .low) == ids { $0.mood == .calm || $0.priority == .low })
        // A converter: the value goes through it as a put's does.
        #expect(try found(Ticket.temperature == Temperature(celsius: 37)) == ids { $0.temperature.celsius == 37 })
        #expect(try found(Ticket.temperature < 0.0) == ids { $0.temperature.celsius < 0 })

        // Parameters by case, ordering and property queries on the stored values.
        let query = try box.query { Ticket.priority == .unknown }.build()
        query.setParameter(Ticket.priority, to: .high)
        #expect(try query.findIds().map(\.value) == ids { $0.priority == .high })
        query.setParameter(Ticket.priority, to: Priority.low.rawValue)
        #expect(try query.findIds().map(\.value) == ids { $0.priority == .low })
        let sorted = try box.query().ordered(by: Ticket.priority, flags: .descending).build().find()
        #expect(sorted.map(\.priority.rawValue) == tickets.map(\.priority.rawValue).sorted(by: >))
        #expect(try box.query().build().property(Ticket.priority).max() == 2)
    }

    @Test func casesReachEmbeddedObjects() throws {
        let dir = TestDirectory("enum-embedded")
        defer { dir.remove() }
        let store = try Store(directoryPath: dir.sub("db"), model: cellarModel())
        defer { store.close() }
        let box: Box<Order> = store.box()
        func line(_ priority: Priority) -> OrderLine {
            let line = OrderLine(sku: "s", quantity: 1)
            line.priority = priority
            return line
        }
        var orders = [Order(number: "1", lines: [line(.low)]), Order(number: "2", lines: [line(.high), line(.low)]),
                      Order(number: "3", lines: [])]
        try box.put(&orders)
        let high = try box.query { Order.lines.priority == .high }.build().find()
        #expect(high.map(\.number) == ["2"])
        let any = try box.query { Order.lines.any { OrderLine.priority == .low && OrderLine.quantity == 1 } }.build().find()
        #expect(any.map(\.number) == ["1", "2"])
    }
}
