@_spi(CellarGenerated) import Cellar

extension CodeEmitter {
    /// A projection's `Projection` conformance and `<Type>CellarProjectionBinding`: its fields
    /// read from the entity's record slots (property ID − 1) with the entity binding's read
    /// expressions, so defaults, enums and converters read the same; the projection built with
    /// its memberwise initializer.
    func emit(_ projection: ProjectionDescription, entities: [EntityDescription], model: Model) throws -> String {
        guard let entity = entities.first(where: { $0.typeName == projection.entityTypeName }),
              let modelEntity = model.entity(named: entity.modelName) else {
            throw GeneratorError("entity \(projection.entityTypeName) of projection \(projection.typeName) is missing from the model (please report)", at: projection.location)
        }
        let binding = "\(projection.typeName.replacingOccurrences(of: ".", with: "_"))CellarProjectionBinding"
        func slot(_ property: PropertyDescription) throws -> Int {
            guard let modelProperty = modelEntity.property(named: property.modelName) else {
                throw GeneratorError("property \(entity.typeName).\(property.name) is missing from the model (please report)", at: property.location)
            }
            return Int(modelProperty.id.id) - 1
        }
        var arguments: [String] = []
        var toOnes: [String] = []
        var slots: [Int] = []
        for field in projection.fields {
            switch field.source {
            case .id(let typed):
                arguments.append("\(field.name): \(typed ? "Cellar.EntityId(id)" : "id")")
            case .property(let property):
                let index = try slot(property)
                slots.append(index)
                arguments.append("\(field.name): \(try readExpression(property, slot: index, in: entity))")
                if property.relationTarget != nil { toOnes.append(field.name) }
            case .toOneTargetId(let property):
                let index = try slot(property)
                slots.append(index)
                arguments.append("\(field.name): \(storedRead(property, slot: index)) ?? 0")
            case .embeddedPath(let steps, let leaf):
                let index = try slot(steps[0].property)
                slots.append(index)
                arguments.append("\(field.name): \(try pathRead(steps, leaf: leaf, field: field, entities: entities, model: model, indent: "            "))")
            }
        }
        let slotList = slots.isEmpty ? "no slots" : "slot\(slots.count == 1 ? "" : "s") \(slots.map(String.init).joined(separator: ", "))"
        var out = """

        // MARK: - \(projection.typeName) (projection of \(entity.typeName))

        extension \(projection.typeName): Cellar.Projection {
            \(access)static let projectionBinding = \(binding)()
        }

        /// Reads `\(projection.typeName)` views of `\(entity.typeName)` records (entity \(modelEntity.name), \(modelEntity.id)): \(slotList).
        \(access)struct \(binding): Cellar.ProjectionBinding {
            \(access)typealias Projection = \(projection.typeName)
            \(access)typealias EntityType = \(entity.typeName)

            \(access)init() {}

            \(access)func read(id: Cellar.Id, from record: Cellar.RecordReader) throws -> \(projection.typeName) {

        """
        if slots.isEmpty { out += "        _ = record\n" }
        if arguments.isEmpty {
            out += "        _ = id\n        return \(projection.typeName)()\n"
        } else {
            out += "        return \(projection.typeName)(\n            \(arguments.joined(separator: ",\n            "))\n        )\n"
        }
        out += "    }\n"
        if !toOnes.isEmpty {
            out += """

                \(access)var hasRelations: Bool { true }

                \(access)func attach(_ projection: \(projection.typeName), store: Cellar.Store) {

            """
            for name in toOnes { out += "        projection.\(name).attach(store)\n" }
            out += "    }\n"
        }
        out += "}\n"
        return out
    }

    /// Reads `from = "address.city"`: a closure per embedded object on the path, given the
    /// object's nested record (`record.nested(slot:)`), returning what a missing object reads
    /// (nil, or for a non-optional object the rest of the path from its initial value) or what
    /// the next object (at the end: the leaf's binding expression) reads.
    func pathRead(_ steps: [ProjectionDescription.Field.PathStep], leaf: PropertyDescription, field: ProjectionDescription.Field,
                  entities: [EntityDescription], model: Model, indent: String) throws -> String {
        func slot(of property: PropertyDescription, in owner: String) throws -> Int {
            guard let description = entities.first(where: { $0.typeName == owner }),
                  let modelProperty = model.entity(named: description.modelName)?.property(named: property.modelName) else {
                throw GeneratorError("property \(owner).\(property.name) is missing from the model (please report)", at: property.location)
            }
            return Int(modelProperty.id.id) - 1
        }
        guard let leafOwnerName = steps.last?.property.embeddedType,
              let leafOwner = entities.first(where: { $0.typeName == leafOwnerName }) else {
            throw GeneratorError("the embedded type of \(field.name) is missing (please report)", at: field.location)
        }
        let resultType = "\(leaf.swiftType)\(field.isOptional ? "?" : "")"
        /// What a missing object at `index` reads.
        func absent(_ index: Int) throws -> String {
            let step = steps[index].property
            guard !step.isOptional else { return "nil" }
            guard let initial = step.embeddedInitializer else {
                throw GeneratorError("\(steps[index].owner).\(step.name) is a non-optional embedded object without an initial value (please report)", at: step.location)
            }
            var text = "(\(initial))"
            var chained = false
            for later in steps[(index + 1)...] {
                text += (chained ? "?." : ".") + later.property.name
                if later.property.isOptional { chained = true }
            }
            return text + (chained ? "?." : ".") + leaf.name
        }
        func closure(_ index: Int, indent: String) throws -> String {
            let step = steps[index]
            let inner = index + 1 < steps.count
                ? try closure(index + 1, indent: indent + "    ")
                : try readExpression(leaf, slot: try slot(of: leaf, in: leafOwner.typeName), in: leafOwner)
            return "try { (record: Cellar.RecordReader?) throws -> \(resultType) in\n"
                + "\(indent)    guard let record else { return \(try absent(index)) }\n"
                + "\(indent)    return \(inner)\n"
                + "\(indent)}(record.nested(slot: \(try slot(of: step.property, in: step.owner))))"
        }
        return try closure(0, indent: indent)
    }
}
