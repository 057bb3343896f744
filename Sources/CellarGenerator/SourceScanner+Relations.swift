import Cellar
import SwiftSyntax

/// Describing relations (ToOne, ToMany, backlinks) and converters.
extension Scan {
    mutating func describeRelation(_ candidate: PropertyCandidate, of entity: EntityDeclaration) throws -> RelationDescription {
        let subject = "`\(entity.qualifiedName).\(candidate.name)`"
        let annotations = candidate.annotations
        let type = candidate.type
        let location = candidate.location
        if let other = annotations.all.first(where: { !["name", "uid", "backlink", "onDelete"].contains($0.name) }) {
            throw GeneratorError("\(other.quoted) cannot be used on the to-many relation \(subject) (a ToMany is not stored in the object's record; it accepts uid, name, backlink and onDelete); remove it", at: other.location)
        }
        if let backlink = annotations.backlink, let uid = annotations.uidAnnotation {
            throw GeneratorError("\(uid.quoted) is on \(subject), a backlink (\(backlink.quoted)): a backlink is not in the model, so it has no UID; remove the uid annotation", at: uid.location)
        }
        guard !candidate.isOptional else {
            throw GeneratorError("\(subject) is an optional ToMany: a ToMany is never optional (it is empty instead); declare it `var \(candidate.name): \(type) = nil`", at: location)
        }
        let target = type.argument(ofGeneric: "ToMany")!
        if case .named(let targetName, let arguments) = target, arguments.isEmpty,
           let embedded = resolveEmbedded(targetName, scope: entity.scope) {
            throw embeddedRelationTarget(subject, type: type, embedded: embedded, name: candidate.name, location: location)
        }
        guard case .named(let targetName, let arguments) = target, arguments.isEmpty,
              let targetEntity = resolveEntity(targetName, scope: entity.scope) else {
            throw GeneratorError("\(subject) is a \(type), but \(target.description.isEmpty ? "it names no target type" : "`\(target)` is not an entity in the scanned sources"): a ToMany<T> needs T to conform to `Entity` (or be annotated `// cellar: entity`)", at: location)
        }
        guard let initializer = candidate.initializer, initializer == "nil" || initializer.filter({ !$0.isWhitespace }) == "[]" else {
            throw GeneratorError("\(subject) \(candidate.initializer.map { "starts as `\($0)`" } ?? "has no initial value"): a ToMany starts empty and the generated code wires it to the store after a get or put; declare it `var \(candidate.name): \(type) = nil` (or `= []`)", at: location)
        }
        if let backlink = annotations.backlink {
            backlinks["\(entity.qualifiedName).\(candidate.name)"] = (backlink, annotations.backlinkName)
        }
        return RelationDescription(name: candidate.name, modelName: annotations.name ?? candidate.name, target: targetEntity.qualifiedName,
                                   backlink: nil, uid: annotations.backlink == nil ? annotations.uid : nil,
                                   deleteRule: annotations.deleteRule, location: location)
    }

    /// What the backlink `relation` of `owner` is the other side of: the `ToOne<Owner>` or the
    /// standalone `ToMany<Owner>` of its target named `name` (model name, else Swift name), or
    /// without a name the target's only one pointing at the owner.
    func resolveBacklink(_ relation: RelationDescription, of owner: EntityDescription, annotation: Annotation, name: String?,
                         entities: [EntityDescription]) throws -> RelationDescription.Backlink? {
        // A target that could not be described has its errors reported already.
        guard let target = entities.first(where: { $0.typeName == relation.target }) else { return nil }
        let subject = "`\(owner.typeName).\(relation.name)`"
        let toOnes = target.properties.filter { $0.relationTarget != nil }
        // The target's standalone ToManys (its backlinks may not be resolved yet: `backlinks` knows them).
        let isBacklink = { (other: RelationDescription) in self.backlinks["\(target.typeName).\(other.name)"] != nil }
        let toManys = target.relations.filter { !isBacklink($0) }
        func pointingBack() -> [String] {
            toOnes.filter { $0.relationTarget == owner.typeName }.map { "`\($0.name)` (ToOne<\(owner.typeName)>)" }
                + toManys.filter { $0.target == owner.typeName }.map { "`\($0.name)` (ToMany<\(owner.typeName)>)" }
        }
        guard let name else {
            let candidates = toOnes.filter { $0.relationTarget == owner.typeName }.map { RelationDescription.Backlink.toOne(property: $0.modelName) }
                + toManys.filter { $0.target == owner.typeName }.map { RelationDescription.Backlink.relation($0.modelName) }
            if candidates.count == 1 { return candidates[0] }
            if candidates.isEmpty {
                throw GeneratorError("\(annotation.quoted) on \(subject): \(target.typeName) has no ToOne<\(owner.typeName)> or ToMany<\(owner.typeName)> to be the backlink of; add one to \(target.typeName) (e.g. `var \(lowercasedFirst(owner.typeName)): ToOne<\(owner.typeName)> = nil`)", at: annotation.location)
            }
            throw GeneratorError("\(annotation.quoted) on \(subject): \(target.typeName) has several relations to \(owner.typeName) (\(pointingBack().joined(separator: ", "))); name the one it is the backlink of, e.g. `// cellar: backlink = \"\(toOnes.first { $0.relationTarget == owner.typeName }?.modelName ?? toManys.first { $0.target == owner.typeName }!.modelName)\"`", at: annotation.location)
        }
        if name.contains(".") {
            return try resolveEmbeddedBacklink(relation, of: owner, in: target, annotation: annotation, path: name, entities: entities)
        }
        let points = pointingBack()
        let hint = points.isEmpty
            ? "; add `var \(name): ToOne<\(owner.typeName)> = nil` to \(target.typeName)"
            : "; its relations to \(owner.typeName): \(points.joined(separator: ", "))"
        if let property = toOnes.first(where: { $0.modelName == name }) ?? toOnes.first(where: { $0.name == name }) {
            guard property.relationTarget == owner.typeName else {
                throw GeneratorError("\(annotation.quoted) on \(subject): `\(target.typeName).\(property.name)` points at \(property.relationTarget!), not at \(owner.typeName), so it has no backlink here\(hint)", at: annotation.location)
            }
            return .toOne(property: property.modelName)
        }
        if let other = toManys.first(where: { $0.modelName == name }) ?? toManys.first(where: { $0.name == name }) {
            guard other.target == owner.typeName else {
                throw GeneratorError("\(annotation.quoted) on \(subject): `\(target.typeName).\(other.name)` points at \(other.target), not at \(owner.typeName), so it has no backlink here\(hint)", at: annotation.location)
            }
            return .relation(other.modelName)
        }
        if let other = target.relations.first(where: { isBacklink($0) && ($0.modelName == name || $0.name == name) }) {
            throw GeneratorError("\(annotation.quoted) on \(subject): `\(target.typeName).\(other.name)` is itself a backlink; a backlink is the other side of a ToOne or a ToMany without `backlink`\(hint)", at: annotation.location)
        }
        if let property = target.properties.first(where: { $0.modelName == name || $0.name == name }) {
            throw GeneratorError("\(annotation.quoted) on \(subject): `\(target.typeName).\(property.name)` is a \(property.swiftType), not a relation; a backlink is the other side of a ToOne<\(owner.typeName)> or ToMany<\(owner.typeName)> of \(target.typeName)\(hint)", at: annotation.location)
        }
        throw GeneratorError("\(annotation.quoted) on \(subject): \(target.typeName) has no ToOne or ToMany named \(name)\(hint)", at: annotation.location)
    }

    /// The backlink `backlink = "tasks.assignee"`: a path of embedded properties of `target` (model
    /// or Swift names) ending at a `ToOne<Owner>` inside the last embedded type.
    func resolveEmbeddedBacklink(_ relation: RelationDescription, of owner: EntityDescription, in target: EntityDescription,
                                 annotation: Annotation, path: String, entities: [EntityDescription]) throws -> RelationDescription.Backlink {
        let subject = "`\(owner.typeName).\(relation.name)`"
        if relation.deleteRule != nil {
            throw GeneratorError("\(annotation.quoted) on \(subject): a backlink through a ToOne inside embedded objects has no delete rule; remove `onDelete`", at: annotation.location)
        }
        let names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var type = target
        var modelNames: [String] = []
        for (position, name) in names.enumerated() {
            guard let property = type.properties.first(where: { $0.modelName == name }) ?? type.properties.first(where: { $0.name == name }) else {
                throw GeneratorError("\(annotation.quoted) on \(subject): \(type.typeName) has no property \(name.isEmpty ? "(an empty name)" : name); the path names embedded properties of \(target.typeName) and ends at a ToOne<\(owner.typeName)>", at: annotation.location)
            }
            modelNames.append(property.modelName)
            if position == names.count - 1 {
                guard property.relationTarget == owner.typeName else {
                    throw GeneratorError("\(annotation.quoted) on \(subject): `\(type.typeName).\(property.name)` is \(property.relationTarget.map { "a ToOne<\($0)>" } ?? "a \(property.swiftType)"), not a ToOne<\(owner.typeName)>; the path ends at the ToOne this is the backlink of", at: annotation.location)
                }
                break
            }
            guard let embedded = property.embeddedType, let next = entities.first(where: { $0.typeName == embedded && $0.isEmbedded }) else {
                throw GeneratorError("\(annotation.quoted) on \(subject): `\(type.typeName).\(property.name)` holds no embedded objects; the path names embedded properties of \(target.typeName) and ends at a ToOne<\(owner.typeName)>", at: annotation.location)
            }
            type = next
        }
        return .embeddedToOne(path: modelNames)
    }

    /// Reads `// cellar: convert` for a property: sets its conversion and returns how the
    /// converted value is stored.
    func conversion(_ spec: PropertyAnnotations.Convert, _ annotation: Annotation, for candidate: PropertyCandidate, subject: String,
                    entity: EntityDeclaration, into property: inout PropertyDescription) throws -> StoredType {
        let type = candidate.type
        let dbType = try spec.dbType.map { name -> StoredType in
            guard let stored = TypeMapping.dbType(name) else {
                throw GeneratorError("\(annotation.quoted): \"dbType\": \"\(name)\" is not a built-in type; use one of \(TypeMapping.builtInNames)", at: annotation.location)
            }
            return stored
        }
        if let converter = spec.converter {
            guard let dbType, let dbName = spec.dbType else {
                throw GeneratorError("\(annotation.quoted): a converter needs the database type it converts to, e.g. `\"dbType\": \"String\"`; add \"dbType\"", at: annotation.location)
            }
            if spec.defaultCase != nil {
                throw GeneratorError("\(annotation.quoted): \"default\" is for enums stored by their raw value; with a converter, the converter returns the value for a missing one: remove \"default\"", at: annotation.location)
            }
            property.conversion = .converter(type: converter, dbType: dbName.filter { !$0.isWhitespace })
            return dbType
        }
        // Without a converter: a RawRepresentable enum stored as its raw value.
        guard case .named(let typeName, let arguments) = type, arguments.isEmpty, TypeMapping.builtIn(type) == nil else {
            throw GeneratorError("\(annotation.quoted) without \"converter\" stores an enum by its raw value, but \(subject) is a \(type); \(TypeMapping.builtIn(type) != nil ? "it is stored as it is: remove the annotation" : "add \"dbType\" and \"converter\" (a type with the two static `convert` functions)")", at: annotation.location)
        }
        var raw: StoredType
        var cases: [String]?
        if let info = resolveEnum(typeName, scope: entity.scope) {
            guard let first = info.firstInherited, let rawType = TypeMapping.builtIn(first) else {
                throw GeneratorError("\(subject) is the enum \(info.qualifiedName), which has no raw type: declare one (`enum \(info.qualifiedName.split(separator: ".").last!): Int`) or use a converter (`\"dbType\"` and `\"converter\"`)", at: annotation.location)
            }
            guard rawType.isInteger || rawType.propertyType == .string else {
                throw GeneratorError("\(subject) is the enum \(info.qualifiedName) with raw type \(first): enums are stored by raw values that are integers or String; use a converter (`\"dbType\"` and `\"converter\"`)", at: annotation.location)
            }
            if let dbType, dbType.swiftName != rawType.swiftName {
                throw GeneratorError("\(annotation.quoted): \"dbType\" is \(dbType.swiftName), but the raw type of \(info.qualifiedName) is \(rawType.swiftName); remove \"dbType\" or make them the same", at: annotation.location)
            }
            raw = rawType
            cases = info.cases
        } else {
            guard let dbType else {
                throw GeneratorError("\(subject) is a \(type), which is not an enum declared in the scanned sources: declare its raw type with dbType, e.g. `// cellar: convert = { \"dbType\": \"Int\", \"default\": \".unknown\" }`", at: annotation.location)
            }
            guard dbType.isInteger || dbType.propertyType == .string else {
                throw GeneratorError("\(annotation.quoted): an enum stored by its raw value needs an integer or String \"dbType\", not \(dbType.swiftName); for other types use a converter", at: annotation.location)
            }
            raw = dbType
        }
        if let defaultCase = spec.defaultCase, let cases, !cases.contains(String(defaultCase.dropFirst()).withoutBackticks) {
            throw GeneratorError("\(annotation.quoted): \"default\": \"\(defaultCase)\" is not a case of \(typeName) (cases: \(cases.map { "." + $0 }.joined(separator: ", ")))", at: annotation.location)
        }
        if spec.defaultCase == nil && !candidate.isOptional {
            throw GeneratorError("\(annotation.quoted): \(subject) is not optional, so it needs a default case for a missing or unknown stored value: add `\"default\": \".caseName\"` (or make the property optional)", at: annotation.location)
        }
        property.conversion = .rawValue(defaultCase: spec.defaultCase)
        return raw
    }
}
