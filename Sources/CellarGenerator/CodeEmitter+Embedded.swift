@_spi(CellarGenerated) import Cellar

extension CodeEmitter {
    /// The embedded types (Swift names) whose objects hold a `ToOne`, themselves or in the
    /// embedded objects they hold: their bindings get an `attach`, and their owners call it.
    static func embeddedTypesWithRelations(_ entities: [EntityDescription]) -> Set<String> {
        var linking: Set<String> = []
        var grew = true
        while grew {
            grew = false
            for type in entities where type.isEmbedded && !linking.contains(type.typeName) {
                if type.properties.contains(where: { $0.relationTarget != nil || $0.embeddedType.map(linking.contains) ?? false }) {
                    linking.insert(type.typeName)
                    grew = true
                }
            }
        }
        return linking
    }

    /// The statements attaching `store` to the `ToOne`s inside the embedded objects that
    /// `receiver` (an object of `type`) holds, for the embedded types in `linking`.
    func embeddedAttachStatements(_ type: EntityDescription, receiver: String, linking: Set<String>) -> [String] {
        type.properties.compactMap { property in
            guard let embedded = property.embeddedType, linking.contains(embedded) else { return nil }
            let value = "\(receiver).\(property.name)"
            let attach = "\(embedded).embeddedBinding.attach"
            if property.isEmbeddedList {
                return "for element in \(value)\(property.isOptional ? " ?? []" : "") { \(attach)(element, store: store) }"
            }
            return property.isOptional ? "if let embedded = \(value) { \(attach)(embedded, store: store) }" : "\(attach)(\(value), store: store)"
        }
    }

    /// The members of `Cellar.EmbeddedProperty` itself: a property of an embedded type with one
    /// of these names gets no member in `extension Cellar.EmbeddedProperty` (the subscript,
    /// `Contact.address[Address.count]`, still reaches it). `via` and `path` are internal to
    /// Cellar, but visible to a target that imports it `@testable`.
    static let embeddedPropertyMembers: Set<String> = [
        "name", "id", "type", "description", "any", "isNil", "isNotNil", "isEmpty", "count", "hashValue", "hash",
        "via", "path",
    ]

    /// An embedded type's `EmbeddedInspectable` conformance and `<Type>CellarBinding` (its
    /// objects written to and read from a nested record, slot = property ID − 1, with the same
    /// statements and read expressions as an entity's), its property constants (`Address.city`,
    /// for conditions inside a list: `lines.any { OrderLine.sku == "A-1" }`), and the members
    /// of `Cellar.EmbeddedProperty` that reach its properties through an owner
    /// (`Contact.address.city`).
    func emitEmbedded(_ type: EntityDescription, _ model: ModelEntity, model fullModel: Model, linking: Set<String>) throws -> String {
        let binding = "\(type.typeName.replacingOccurrences(of: ".", with: "_"))CellarBinding"
        var stored: [(PropertyDescription, Int)] = []
        for property in type.properties {
            guard let slot = model.property(named: property.modelName).map({ Int($0.id.id) - 1 }) else {
                throw GeneratorError("property \(type.typeName).\(property.name) is missing from the model (please report)", at: property.location)
            }
            stored.append((property, slot))
        }
        var out = """

        // MARK: - \(type.typeName) (embedded)

        extension \(type.typeName): Cellar.EmbeddedInspectable {
            \(access)static let embeddedBinding = \(binding)()
        }

        /// Stores and reads `\(type.typeName)` objects embedded in their owners' records (embedded type \(model.name), \(model.id)).
        \(access)struct \(binding): Cellar.EmbeddedBinding {
            \(access)typealias EmbeddedType = \(type.typeName)

            \(access)init() {}

            \(access)var typeName: String { \(literal(model.name)) }
            \(access)var typeId: Cellar.IdUid { Cellar.IdUid(id: \(model.id.id), uid: \(model.id.uid)) }
            \(access)var slotCount: Int { \(model.lastPropertyId.id) }

            \(access)func write(_ value: \(type.typeName), to record: Cellar.RecordBuilder) throws {

        """
        for (property, slot) in stored {
            out += "        \(writeStatement(property, slot: slot, receiver: "value"))\n"
        }
        if stored.isEmpty { out += "        _ = (value, record)\n" }
        out += """
            }

            \(access)func read(from record: Cellar.RecordReader) throws -> \(type.typeName) {

        """
        if stored.isEmpty { out += "        _ = record\n" }
        switch type.kind {
        case .class:
            out += "        let value = \(type.typeName)()\n"
            for (property, slot) in stored {
                out += "        value.\(property.name) = \(try readExpression(property, slot: slot, in: type))\n"
            }
            out += "        return value\n"
        case .struct:
            if stored.isEmpty {
                out += "        return \(type.typeName)()\n"
            } else {
                let arguments = try stored.map { property, slot in "\(property.name): \(try readExpression(property, slot: slot, in: type))" }
                out += "        return \(type.typeName)(\n            \(arguments.joined(separator: ",\n            "))\n        )\n"
            }
        }
        out += "    }\n"
        if linking.contains(type.typeName) {
            // The ToOnes of an embedded object read their targets from the store its owner came
            // from: the owner's binding calls this after a get or put.
            out += """

                /// Lets the `ToOne`s in `value` (and in the embedded objects it holds) read their targets from `store`.
                \(access)func attach(_ value: \(type.typeName), store: Cellar.Store) {

            """
            for property in type.properties where property.relationTarget != nil {
                out += "        value.\(property.name).attach(store)\n"
            }
            for statement in embeddedAttachStatements(type, receiver: "value", linking: linking) { out += "        \(statement)\n" }
            out += "    }\n"
        }
        out += """
        }

        extension \(type.typeName) {

        """
        out += propertyConstants(type, model)
        out += "}\n"

        let reachable = type.properties.filter { !Self.embeddedPropertyMembers.contains($0.name) }
        guard !reachable.isEmpty else { return out }
        out += """

        extension Cellar.EmbeddedProperty where T == \(type.typeName) {

        """
        for property in reachable {
            let result = constantType(property, of: "E")
            out += "    /// `…\(property.name)` through an embedded \(type.typeName).\n"
            out += "    \(access)var \(property.name): \(result) { self[\(type.typeName).\(property.name)] }\n"
        }
        out += "}\n"
        return out
    }
}
