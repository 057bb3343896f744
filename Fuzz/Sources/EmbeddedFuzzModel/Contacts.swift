@_spi(CellarGenerated) import Cellar

// Contacts with embedded addresses, with hand-written bindings written the way the generator
// writes them (so that the fuzzer does not depend on it).

/// A point, embedded in an address.
public struct Geo: EmbeddedInspectable, Equatable {
    public var lat = 0.0
    public var lon = 0.0
    public init(lat: Double = 0, lon: Double = 0) { self.lat = lat; self.lon = lon }
    public static let embeddedBinding = GeoBinding()
    public static let lat = Property<Geo>(name: "lat", id: 1, type: .double)
    public static let lon = Property<Geo>(name: "lon", id: 2, type: .double)

    /// Compared by bits, so that a NaN read from fuzzed bytes equals itself.
    public static func == (a: Geo, b: Geo) -> Bool {
        a.lat.bitPattern == b.lat.bitPattern && a.lon.bitPattern == b.lon.bitPattern
    }
}

public struct GeoBinding: EmbeddedBinding {
    public typealias EmbeddedType = Geo
    public var typeName: String { "Geo" }
    public var typeId: IdUid { IdUid(id: 4, uid: 9_400) }
    public var slotCount: Int { 2 }
    public func write(_ value: Geo, to record: RecordBuilder) throws {
        record.add(value.lat, slot: 0)
        record.add(value.lon, slot: 1)
    }
    public func read(from record: RecordReader) throws -> Geo {
        Geo(lat: try record.double(slot: 0) ?? 0, lon: try record.double(slot: 1) ?? 0)
    }
}

/// An address: `zip` indexed, a list of tags, an optional point.
public struct Address: EmbeddedInspectable, Equatable {
    public var city = ""
    public var zip = ""
    public var tags: [String] = []
    public var geo: Geo?
    public init(city: String = "", zip: String = "", tags: [String] = [], geo: Geo? = nil) {
        self.city = city; self.zip = zip; self.tags = tags; self.geo = geo
    }
    public static let embeddedBinding = AddressBinding()
    public static let city = Property<Address>(name: "city", id: 1, type: .string)
    public static let zip = Property<Address>(name: "zip", id: 2, type: .string)
    public static let tags = Property<Address>(name: "tags", id: 3, type: .stringVector)
    public static let geo = EmbeddedProperty<Address, Geo>(name: "geo", id: 4, type: .embedded)

    /// Strings compared by their UTF-8 bytes (as Cellar stores and compares them), not by
    /// Unicode canonical equivalence.
    public static func == (a: Address, b: Address) -> Bool {
        a.city.utf8.elementsEqual(b.city.utf8) && a.zip.utf8.elementsEqual(b.zip.utf8)
            && a.tags.count == b.tags.count && Swift.zip(a.tags, b.tags).allSatisfy { $0.utf8.elementsEqual($1.utf8) } && a.geo == b.geo
    }
}

public struct AddressBinding: EmbeddedBinding {
    public typealias EmbeddedType = Address
    public var typeName: String { "Address" }
    public var typeId: IdUid { IdUid(id: 3, uid: 9_300) }
    public var slotCount: Int { 4 }
    public func write(_ value: Address, to record: RecordBuilder) throws {
        record.add(value.city, slot: 0)
        record.add(value.zip, slot: 1)
        try record.add(value.tags, slot: 2)
        try record.add(embedded: value.geo, slot: 3)
    }
    public func read(from record: RecordReader) throws -> Address {
        Address(city: try record.string(slot: 0) ?? "", zip: try record.string(slot: 1) ?? "",
                tags: try record.list(String.self, slot: 2) ?? [], geo: try record.embedded(Geo.self, slot: 3))
    }
}

extension EmbeddedProperty where T == Address {
    public var city: Property<E> { self[Address.city] }
    public var zip: Property<E> { self[Address.zip] }
    public var tags: Property<E> { self[Address.tags] }
    public var geo: EmbeddedProperty<E, Geo> { self[Address.geo] }
}

extension EmbeddedProperty where T == Geo {
    public var lat: Property<E> { self[Geo.lat] }
    public var lon: Property<E> { self[Geo.lon] }
}

/// A contact with a home and a work address (both optional).
public final class Contact: Entity, EntityInspectable {
    public var id: Id = 0
    public var name = ""
    public var home: Address?
    public var work: Address?
    public init() {}
    public init(_ name: String, home: Address? = nil, work: Address? = nil) { self.name = name; self.home = home; self.work = work }
    public static let entityBinding = ContactBinding()
    public static let name = Property<Contact>(name: "name", id: 2, type: .string)
    public static let home = EmbeddedProperty<Contact, Address>(name: "home", id: 3, type: .embedded)
    public static let work = EmbeddedProperty<Contact, Address>(name: "work", id: 4, type: .embedded)

    /// Whether both hold the same values (the id aside).
    public func sameValues(as other: Contact) -> Bool {
        name.utf8.elementsEqual(other.name.utf8) && home == other.home && work == other.work
    }
}

public struct ContactBinding: EntityBinding {
    public typealias EntityType = Contact
    public var entityName: String { "Contact" }
    public var entityId: IdUid { IdUid(id: 1, uid: 9_100) }
    public var slotCount: Int { 4 }
    public func id(of entity: Contact) -> Id { entity.id }
    public func setId(_ id: Id, of entity: inout Contact) { entity.id = id }
    public func write(_ entity: Contact, to record: RecordBuilder) throws {
        record.add(entity.name, slot: 1)
        try record.add(embedded: entity.home, slot: 2)
        try record.add(embedded: entity.work, slot: 3)
    }
    public func read(id: Id, from record: RecordReader) throws -> Contact {
        let contact = Contact()
        contact.id = id
        contact.name = try record.string(slot: 1) ?? ""
        contact.home = try record.embedded(Address.self, slot: 2)
        contact.work = try record.embedded(Address.self, slot: 3)
        return contact
    }
}
