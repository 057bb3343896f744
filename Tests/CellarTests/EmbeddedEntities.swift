@_spi(CellarGenerated) import Cellar
import Foundation

// Entities with embedded objects for the embedded query and index tests, with hand-written
// bindings written the way the generator writes them (so these tests do not depend on it).

/// A point, embedded in an address.
struct EGeo: EmbeddedInspectable, Equatable {
    var lat = 0.0
    var lon = 0.0
    static let embeddedBinding = EGeoBinding()
    static let lat = Property<EGeo>(name: "lat", id: 1, type: .double)
    static let lon = Property<EGeo>(name: "lon", id: 2, type: .double)
}

struct EGeoBinding: EmbeddedBinding {
    typealias EmbeddedType = EGeo
    var typeName: String { "EGeo" }
    var typeId: IdUid { IdUid(id: 4, uid: 8_400) }
    var slotCount: Int { 2 }
    func write(_ value: EGeo, to record: RecordBuilder) throws {
        record.add(value.lat, slot: 0)
        record.add(value.lon, slot: 1)
    }
    func read(from record: RecordReader) throws -> EGeo {
        EGeo(lat: try record.double(slot: 0) ?? 0, lon: try record.double(slot: 1) ?? 0)
    }
}

/// An address: `zip` indexed, a list of tags, an optional point.
struct EAddress: EmbeddedInspectable, Equatable {
    var city = ""
    var zip = ""
    var tags: [String] = []
    var geo: EGeo?
    static let embeddedBinding = EAddressBinding()
    static let city = Property<EAddress>(name: "city", id: 1, type: .string)
    static let zip = Property<EAddress>(name: "zip", id: 2, type: .string)
    static let tags = Property<EAddress>(name: "tags", id: 3, type: .stringVector)
    static let geo = EmbeddedProperty<EAddress, EGeo>(name: "geo", id: 4, type: .embedded)
}

struct EAddressBinding: EmbeddedBinding {
    typealias EmbeddedType = EAddress
    var typeName: String { "EAddress" }
    var typeId: IdUid { IdUid(id: 3, uid: 8_300) }
    var slotCount: Int { 4 }
    func write(_ value: EAddress, to record: RecordBuilder) throws {
        record.add(value.city, slot: 0)
        record.add(value.zip, slot: 1)
        try record.add(value.tags, slot: 2)
        try record.add(embedded: value.geo, slot: 3)
    }
    func read(from record: RecordReader) throws -> EAddress {
        EAddress(city: try record.string(slot: 0) ?? "", zip: try record.string(slot: 1) ?? "",
                 tags: try record.list(String.self, slot: 2) ?? [], geo: try record.embedded(EGeo.self, slot: 3))
    }
}

extension EmbeddedProperty where T == EAddress {
    var city: Property<E> { self[EAddress.city] }
    var zip: Property<E> { self[EAddress.zip] }
    var tags: Property<E> { self[EAddress.tags] }
    var geo: EmbeddedProperty<E, EGeo> { self[EAddress.geo] }
}

extension EmbeddedProperty where T == EGeo {
    var lat: Property<E> { self[EGeo.lat] }
    var lon: Property<E> { self[EGeo.lon] }
}

/// A contact with a home and a work address (both optional).
final class EContact: Entity, EntityInspectable {
    var id: Id = 0
    var name = ""
    var home: EAddress?
    var work: EAddress?
    init() {}
    init(_ name: String, home: EAddress? = nil, work: EAddress? = nil) { self.name = name; self.home = home; self.work = work }
    static let entityBinding = EContactBinding()
    static let name = Property<EContact>(name: "name", id: 2, type: .string)
    static let home = EmbeddedProperty<EContact, EAddress>(name: "home", id: 3, type: .embedded)
    static let work = EmbeddedProperty<EContact, EAddress>(name: "work", id: 4, type: .embedded)
}

struct EContactBinding: EntityBinding {
    typealias EntityType = EContact
    var entityName: String { "EContact" }
    var entityId: IdUid { IdUid(id: 1, uid: 8_100) }
    var slotCount: Int { 4 }
    func id(of entity: EContact) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout EContact) { entity.id = id }
    func write(_ entity: EContact, to record: RecordBuilder) throws {
        record.add(entity.name, slot: 1)
        try record.add(embedded: entity.home, slot: 2)
        try record.add(embedded: entity.work, slot: 3)
    }
    func read(id: Id, from record: RecordReader) throws -> EContact {
        let contact = EContact()
        contact.id = id
        contact.name = try record.string(slot: 1) ?? ""
        contact.home = try record.embedded(EAddress.self, slot: 2)
        contact.work = try record.embedded(EAddress.self, slot: 3)
        return contact
    }
}

/// A line of an order: `sku` indexed.
struct ELine: EmbeddedInspectable, Equatable {
    var sku = ""
    var quantity = 0
    var shipTo: EAddress?
    static let embeddedBinding = ELineBinding()
    static let sku = Property<ELine>(name: "sku", id: 1, type: .string)
    static let quantity = Property<ELine>(name: "quantity", id: 2, type: .long)
    static let shipTo = EmbeddedProperty<ELine, EAddress>(name: "shipTo", id: 3, type: .embedded)
}

struct ELineBinding: EmbeddedBinding {
    typealias EmbeddedType = ELine
    var typeName: String { "ELine" }
    var typeId: IdUid { IdUid(id: 5, uid: 8_500) }
    var slotCount: Int { 3 }
    func write(_ value: ELine, to record: RecordBuilder) throws {
        record.add(value.sku, slot: 0)
        record.add(value.quantity, slot: 1)
        try record.add(embedded: value.shipTo, slot: 2)
    }
    func read(from record: RecordReader) throws -> ELine {
        ELine(sku: try record.string(slot: 0) ?? "", quantity: try record.read(Int.self, slot: 1) ?? 0,
              shipTo: try record.embedded(EAddress.self, slot: 2))
    }
}

extension EmbeddedProperty where T == ELine {
    var sku: Property<E> { self[ELine.sku] }
    var quantity: Property<E> { self[ELine.quantity] }
    var shipTo: EmbeddedProperty<E, EAddress> { self[ELine.shipTo] }
}

/// An order with a list of lines.
final class EOrder: Entity, EntityInspectable {
    var id: Id = 0
    var number = 0
    var lines: [ELine] = []
    init() {}
    init(_ number: Int, _ lines: [ELine]) { self.number = number; self.lines = lines }
    static let entityBinding = EOrderBinding()
    static let number = Property<EOrder>(name: "number", id: 2, type: .long)
    static let lines = EmbeddedProperty<EOrder, ELine>(name: "lines", id: 3, type: .embeddedList)
}

struct EOrderBinding: EntityBinding {
    typealias EntityType = EOrder
    var entityName: String { "EOrder" }
    var entityId: IdUid { IdUid(id: 2, uid: 8_200) }
    var slotCount: Int { 3 }
    func id(of entity: EOrder) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout EOrder) { entity.id = id }
    func write(_ entity: EOrder, to record: RecordBuilder) throws {
        record.add(entity.number, slot: 1)
        try record.add(embeddedList: entity.lines, slot: 2)
    }
    func read(id: Id, from record: RecordReader) throws -> EOrder {
        let order = EOrder()
        order.id = id
        order.number = try record.read(Int.self, slot: 1) ?? 0
        order.lines = try record.embeddedList(ELine.self, slot: 2) ?? []
        return order
    }
}

/// The model of the entities above; `indexes: false` leaves out the indexes on `zip` and `sku`.
func embeddedModel(indexes: Bool = true) -> Cellar.Model {
    func entity(_ name: String, _ id: UInt32, embedded: Bool = false,
                _ properties: [(String, PropertyType, PropertyFlags, index: UInt32?, target: String?)]) -> ModelEntity {
        let list = properties.enumerated().map { offset, p in
            let propertyId = UInt32(offset + 1)
            return ModelProperty(name: p.0, id: IdUid(id: propertyId, uid: UInt64(id) * 100_000 + UInt64(propertyId) * 10_000 + UInt64(p.1.rawValue)),
                                 type: p.1, flags: indexes && p.index != nil ? p.2.union(.indexed) : p.2,
                                 indexId: indexes ? p.index.map { IdUid(id: $0, uid: 90_000 + UInt64($0)) } : nil, embeddedType: p.target)
        }
        return ModelEntity(name: name, id: IdUid(id: id, uid: 8_000 + UInt64(id) * 100), lastPropertyId: list.last!.id,
                           properties: list, flags: embedded ? ModelEntity.embeddedFlag : nil)
    }
    let contact = entity("EContact", 1, [("id", .long, .id, nil, nil), ("name", .string, [], nil, nil),
                                         ("home", .embedded, [], nil, "EAddress"), ("work", .embedded, [], nil, "EAddress")])
    let order = entity("EOrder", 2, [("id", .long, .id, nil, nil), ("number", .long, [], nil, nil), ("lines", .embeddedList, [], nil, "ELine")])
    let address = entity("EAddress", 3, embedded: true, [("city", .string, [], nil, nil), ("zip", .string, [], 1, nil),
                                                        ("tags", .stringVector, [], nil, nil), ("geo", .embedded, [], nil, "EGeo")])
    let geo = entity("EGeo", 4, embedded: true, [("lat", .double, [], nil, nil), ("lon", .double, [], nil, nil)])
    let line = entity("ELine", 5, embedded: true, [("sku", .string, [], 2, nil), ("quantity", .long, [], nil, nil),
                                                  ("shipTo", .embedded, [], nil, "EAddress")])
    return Cellar.Model(entities: [contact, order, address, geo, line], lastEntityId: line.id,
                        lastIndexId: indexes ? IdUid(id: 2, uid: 90_002) : .zero)
}

/// A recursive embedded type: a node with an optional child and a list of children, for values
/// as deep as `Model.maxEmbeddingDepth`.
final class ENode: EmbeddedInspectable, Equatable {
    var label = ""
    var child: ENode?
    var children: [ENode] = []
    init(_ label: String, child: ENode? = nil, children: [ENode] = []) { self.label = label; self.child = child; self.children = children }
    static let embeddedBinding = ENodeBinding()
    static func == (a: ENode, b: ENode) -> Bool { a.label == b.label && a.child == b.child && a.children == b.children }

    /// A chain of `count` nodes, each the next one's parent; every list of children empty.
    static func chain(_ count: Int) -> ENode {
        (1..<count).reversed().reduce(ENode("n\(count - 1)")) { ENode("n\($1 - 1)", child: $0) }
    }

    /// The number of nodes down the chain of children (`child`) from this one.
    var depth: Int { 1 + (child?.depth ?? 0) }
}

struct ENodeBinding: EmbeddedBinding {
    typealias EmbeddedType = ENode
    var typeName: String { "ENode" }
    var typeId: IdUid { IdUid(id: 2, uid: 8_720) }
    var slotCount: Int { 3 }
    func write(_ value: ENode, to record: RecordBuilder) throws {
        record.add(value.label, slot: 0)
        try record.add(embedded: value.child, slot: 1)
        try record.add(embeddedList: value.children, slot: 2)
    }
    func read(from record: RecordReader) throws -> ENode {
        ENode(try record.string(slot: 0) ?? "", child: try record.embedded(ENode.self, slot: 1),
              children: try record.embeddedList(ENode.self, slot: 2) ?? [])
    }
}

/// An entity holding a tree of nodes.
final class ETree: Entity, EntityInspectable {
    var id: Id = 0
    var root: ENode?
    init() {}
    init(_ root: ENode?) { self.root = root }
    static let entityBinding = ETreeBinding()
}

struct ETreeBinding: EntityBinding {
    typealias EntityType = ETree
    var entityName: String { "ETree" }
    var entityId: IdUid { IdUid(id: 1, uid: 8_710) }
    var slotCount: Int { 2 }
    func id(of entity: ETree) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout ETree) { entity.id = id }
    func write(_ entity: ETree, to record: RecordBuilder) throws { try record.add(embedded: entity.root, slot: 1) }
    func read(id: Id, from record: RecordReader) throws -> ETree {
        let tree = ETree(try record.embedded(ENode.self, slot: 1))
        tree.id = id
        return tree
    }
}

/// The model of `ETree` and `ENode`.
func treeModel() -> Cellar.Model {
    let tree = ModelEntity(name: "ETree", id: IdUid(id: 1, uid: 8_710), lastPropertyId: IdUid(id: 2, uid: 8_712), properties: [
        ModelProperty(name: "id", id: IdUid(id: 1, uid: 8_711), type: .long, flags: .id),
        ModelProperty(name: "root", id: IdUid(id: 2, uid: 8_712), type: .embedded, embeddedType: "ENode"),
    ])
    let node = ModelEntity(name: "ENode", id: IdUid(id: 2, uid: 8_720), lastPropertyId: IdUid(id: 3, uid: 8_723), properties: [
        ModelProperty(name: "label", id: IdUid(id: 1, uid: 8_721), type: .string),
        ModelProperty(name: "child", id: IdUid(id: 2, uid: 8_722), type: .embedded, embeddedType: "ENode"),
        ModelProperty(name: "children", id: IdUid(id: 3, uid: 8_723), type: .embeddedList, embeddedType: "ENode"),
    ], flags: ModelEntity.embeddedFlag)
    return Cellar.Model(entities: [tree, node], lastEntityId: node.id)
}
