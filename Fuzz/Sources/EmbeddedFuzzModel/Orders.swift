@_spi(CellarGenerated) import Cellar

// Orders with a list of embedded lines, with hand-written bindings written the way the generator
// writes them.

/// A line of an order: `sku` indexed, an optional address to ship to.
public struct Line: EmbeddedInspectable, Equatable {
    public var sku = ""
    public var quantity = 0
    public var shipTo: Address?
    public init(sku: String = "", quantity: Int = 0, shipTo: Address? = nil) { self.sku = sku; self.quantity = quantity; self.shipTo = shipTo }
    public static let embeddedBinding = LineBinding()
    public static let sku = Property<Line>(name: "sku", id: 1, type: .string)
    public static let quantity = Property<Line>(name: "quantity", id: 2, type: .long)
    public static let shipTo = EmbeddedProperty<Line, Address>(name: "shipTo", id: 3, type: .embedded)

    /// Strings compared by their UTF-8 bytes.
    public static func == (a: Line, b: Line) -> Bool {
        a.sku.utf8.elementsEqual(b.sku.utf8) && a.quantity == b.quantity && a.shipTo == b.shipTo
    }
}

public struct LineBinding: EmbeddedBinding {
    public typealias EmbeddedType = Line
    public var typeName: String { "Line" }
    public var typeId: IdUid { IdUid(id: 5, uid: 9_500) }
    public var slotCount: Int { 3 }
    public func write(_ value: Line, to record: RecordBuilder) throws {
        record.add(value.sku, slot: 0)
        record.add(value.quantity, slot: 1)
        try record.add(embedded: value.shipTo, slot: 2)
    }
    public func read(from record: RecordReader) throws -> Line {
        Line(sku: try record.string(slot: 0) ?? "", quantity: try record.read(Int.self, slot: 1) ?? 0,
             shipTo: try record.embedded(Address.self, slot: 2))
    }
}

extension EmbeddedProperty where T == Line {
    public var sku: Property<E> { self[Line.sku] }
    public var quantity: Property<E> { self[Line.quantity] }
    public var shipTo: EmbeddedProperty<E, Address> { self[Line.shipTo] }
}

/// An order with a list of lines.
public final class Order: Entity, EntityInspectable {
    public var id: Id = 0
    public var number = 0
    public var lines: [Line] = []
    public init() {}
    public init(_ number: Int, _ lines: [Line]) { self.number = number; self.lines = lines }
    public static let entityBinding = OrderBinding()
    public static let number = Property<Order>(name: "number", id: 2, type: .long)
    public static let lines = EmbeddedProperty<Order, Line>(name: "lines", id: 3, type: .embeddedList)

    /// Whether both hold the same values (the id aside).
    public func sameValues(as other: Order) -> Bool { number == other.number && lines == other.lines }
}

public struct OrderBinding: EntityBinding {
    public typealias EntityType = Order
    public var entityName: String { "Order" }
    public var entityId: IdUid { IdUid(id: 2, uid: 9_200) }
    public var slotCount: Int { 3 }
    public func id(of entity: Order) -> Id { entity.id }
    public func setId(_ id: Id, of entity: inout Order) { entity.id = id }
    public func write(_ entity: Order, to record: RecordBuilder) throws {
        record.add(entity.number, slot: 1)
        try record.add(embeddedList: entity.lines, slot: 2)
    }
    public func read(id: Id, from record: RecordReader) throws -> Order {
        let order = Order()
        order.id = id
        order.number = try record.read(Int.self, slot: 1) ?? 0
        order.lines = try record.embeddedList(Line.self, slot: 2) ?? []
        return order
    }
}
