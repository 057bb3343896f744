@_spi(CellarGenerated) import Cellar

/// The model of `Contact`, `Order` and `Outline` and their embedded types (`Address`, `Geo`,
/// `Line`, `Node`), with indexes on `Address.zip` and `Line.sku`.
public enum FuzzModel {
    /// The entities' and embedded types' names, in the order of their IDs (1…7).
    public static let typeNames = ["Contact", "Order", "Address", "Geo", "Line", "Outline", "Node"]

    public static func make() -> Model {
        func entity(_ name: String, _ id: UInt32, embedded: Bool = false,
                    _ properties: [(String, PropertyType, PropertyFlags, index: UInt32?, target: String?)]) -> ModelEntity {
            let list = properties.enumerated().map { offset, p in
                let propertyId = UInt32(offset + 1)
                return ModelProperty(name: p.0, id: IdUid(id: propertyId, uid: UInt64(id) * 100_000 + UInt64(propertyId) * 10_000 + UInt64(p.1.rawValue)),
                                     type: p.1, flags: p.index != nil ? p.2.union(.indexed) : p.2,
                                     indexId: p.index.map { IdUid(id: $0, uid: 95_000 + UInt64($0)) }, embeddedType: p.target)
            }
            return ModelEntity(name: name, id: IdUid(id: id, uid: 9_000 + UInt64(id) * 100), lastPropertyId: list.last!.id,
                               properties: list, flags: embedded ? ModelEntity.embeddedFlag : nil)
        }
        let contact = entity("Contact", 1, [("id", .long, .id, nil, nil), ("name", .string, [], nil, nil),
                                            ("home", .embedded, [], nil, "Address"), ("work", .embedded, [], nil, "Address")])
        let order = entity("Order", 2, [("id", .long, .id, nil, nil), ("number", .long, [], nil, nil), ("lines", .embeddedList, [], nil, "Line")])
        let address = entity("Address", 3, embedded: true, [("city", .string, [], nil, nil), ("zip", .string, [], 1, nil),
                                                           ("tags", .stringVector, [], nil, nil), ("geo", .embedded, [], nil, "Geo")])
        let geo = entity("Geo", 4, embedded: true, [("lat", .double, [], nil, nil), ("lon", .double, [], nil, nil)])
        let line = entity("Line", 5, embedded: true, [("sku", .string, [], 2, nil), ("quantity", .long, [], nil, nil),
                                                     ("shipTo", .embedded, [], nil, "Address")])
        let outline = entity("Outline", 6, [("id", .long, .id, nil, nil), ("title", .string, [], nil, nil), ("root", .embedded, [], nil, "Node")])
        let node = entity("Node", 7, embedded: true, [("label", .string, [], nil, nil), ("value", .long, [], nil, nil),
                                                     ("child", .embedded, [], nil, "Node"), ("children", .embeddedList, [], nil, "Node")])
        // Without the model file's notes (`Model.standardNotes`): LeakSanitizer reports the boxes
        // of that static array, made on first use inside a fuzzed input, as leaked.
        return Model(entities: [contact, order, address, geo, line, outline, node], lastEntityId: node.id,
                     lastIndexId: IdUid(id: 2, uid: 95_002), extra: [])
    }
}
