@_spi(CellarGenerated) import Cellar
import SwiftSyntax

/// Pass two of a scan: each entity described, its stored properties read.
extension Scan {
    // MARK: Pass two: describe the entities

    mutating func describeEntities() -> [EntityDescription] {
        var result: [EntityDescription] = []
        for entity in entities {
            if let description = describe(entity) { result.append(description) }
        }
        for index in result.indices {
            for relationIndex in result[index].relations.indices {
                let relation = result[index].relations[relationIndex]
                guard let (annotation, name) = backlinks["\(result[index].typeName).\(relation.name)"] else { continue }
                do {
                    result[index].relations[relationIndex].backlink = try resolveBacklink(relation, of: result[index], annotation: annotation,
                                                                                          name: name, entities: result)
                } catch let error as GeneratorError {
                    errors.append(error)
                } catch {
                    report("\(error)", at: annotation.location)
                }
            }
        }
        // Embedded types must not contain themselves, nor nest too deep.
        errors += EmbeddedNesting.check(result)
        // Model names and UIDs must be unique across the scanned sources.
        var modelNames: [String: EntityDescription] = [:]
        var uids: [UInt64: String] = [:]
        for entity in result {
            if let other = modelNames[entity.modelName] {
                report("`\(entity.typeName)` and `\(other.typeName)` (\(other.location)) both have the name \(entity.modelName) in the model: rename one with `// cellar: name = \"…\"`", at: entity.location)
            } else {
                modelNames[entity.modelName] = entity
            }
            let uidsOfEntity = [(entity.uid, entity.typeName, entity.location)]
                + entity.properties.map { ($0.uid, "\(entity.typeName).\($0.name)", $0.location) }
                + entity.relations.map { ($0.uid, "\(entity.typeName).\($0.name)", $0.location) }
            for case (let uid??, let what, let location) in uidsOfEntity {
                if let other = uids[uid] {
                    report("the UID \(uid) of `\(what)` is also the UID of `\(other)`: a UID belongs to one entity or property; remove the wrong `// cellar: uid` (or write `// cellar: uid` without a value to get a new one)", at: location)
                } else {
                    uids[uid] = what
                }
            }
        }
        return result
    }

    mutating func describe(_ entity: EntityDeclaration) -> EntityDescription? {
        let name = entity.qualifiedName
        let file = entity.file
        if entity.decl.hasError {
            let finder = FirstErrorFinder(viewMode: .all)
            finder.walk(entity.decl)
            report("`\(name)` does not parse as Swift; fix the syntax error first (the compiler describes it)",
                   at: finder.position.map(file.location) ?? entity.location)
            return nil
        }
        if entity.isGeneric {
            report("`\(name)` is generic or nested in a generic type; \(entity.isEmbedded ? "an embedded type" : "an entity") must be a concrete type", at: entity.location)
            return nil
        }
        let modifiers: DeclModifierListSyntax
        let members: MemberBlockItemListSyntax
        if let classDecl = entity.decl.as(ClassDeclSyntax.self) {
            modifiers = classDecl.modifiers
            members = classDecl.memberBlock.members
        } else if let structDecl = entity.decl.as(StructDeclSyntax.self) {
            modifiers = structDecl.modifiers
            members = structDecl.memberBlock.members
        } else {
            return nil
        }
        if modifiers.contains(where: { $0.name.tokenKind == .keyword(.private) || $0.name.tokenKind == .keyword(.fileprivate) }) {
            report("`\(name)` is private: the generated code (in another file) must use it; make it internal or public", at: entity.location)
            return nil
        }
        let errorCount = errors.count
        var candidates: [PropertyCandidate] = []
        readProperties(members, of: entity, into: &candidates)

        // The id: the property annotated `// cellar: id`, else the one named `id` of an id type.
        let annotated = candidates.indices.filter { candidates[$0].annotations.id != nil }
        var idIndex: Int?
        if entity.isEmbedded {
            // An embedded type has no id: its members are checked for one below.
        } else if annotated.count > 1 {
            let names = annotated.map { "`\(candidates[$0].name)`" }.joined(separator: ", ")
            for index in annotated.dropFirst() {
                report("`\(name)` has several properties annotated `// cellar: id` (\(names)); an entity has one id: keep the annotation on one", at: candidates[index].annotations.id!.location)
            }
            return nil
        } else if let index = annotated.first {
            idIndex = index
        } else if let index = candidates.firstIndex(where: { $0.name == "id" && !$0.failed && isIdType($0.type, of: entity, strict: true) }) {
            idIndex = index
        } else if !candidates.contains(where: { $0.failed && ($0.name == "id" || $0.annotations.id != nil) }) {
            var message = "`\(name)` has no id property: add `var id: Id = 0` (or `var id: EntityId<\(entity.scope.last!)> = 0`, or annotate a 64-bit integer property `// cellar: id`)"
            if let named = candidates.first(where: { $0.name == "id" && !$0.failed }) {
                message += "; its `id` is \(named.isOptional ? "an optional " : "")\(named.type)\(named.isOptional ? "" : ", which is not an id type (Id, UInt64 or EntityId<\(entity.scope.last!)>)")"
            }
            report(message, at: entity.location)
        }

        var properties: [PropertyDescription] = []
        var relations: [RelationDescription] = []
        var modelNames: [String: String] = [:]
        func claim(_ modelName: String, _ swiftName: String, at location: SourceLocation) {
            if let other = modelNames[modelName] {
                report("`\(name).\(swiftName)` and `\(name).\(other)` both have the name \(modelName) in the model: rename one with `// cellar: name = \"…\"`", at: location)
            }
            modelNames[modelName] = swiftName
        }
        for (index, candidate) in candidates.enumerated() where !candidate.failed {
            do {
                if entity.isEmbedded { try checkEmbeddedMember(candidate, of: entity) }
                if index != idIndex && candidate.type.argument(ofGeneric: "ToMany") != nil {
                    let relation = try describeRelation(candidate, of: entity)
                    // A backlink is not in the model: its name cannot clash there.
                    if candidate.annotations.backlink == nil { claim(relation.modelName, relation.name, at: relation.location) }
                    relations.append(relation)
                    continue
                }
                let property = index == idIndex ? try describeId(candidate, of: entity) : try describeProperty(candidate, of: entity)
                claim(property.modelName, property.name, at: property.location)
                properties.append(property)
            } catch let error as GeneratorError {
                errors.append(error)
            } catch {
                report("\(error)", at: candidate.location)
            }
        }
        let primaryKeys = properties.filter { $0.flags.contains(.primaryKey) }
        if primaryKeys.count > 1 {
            report("`\(name).\(primaryKeys[1].name)` is a second primary key (`\(name).\(primaryKeys[0].name)` is one): an entity has at most one; remove one of the annotations", at: primaryKeys[1].location)
        }
        var indexes: [IndexDescription] = []
        for (names, unique, annotation) in entity.annotations.indexes {
            if entity.isEmbedded {
                report("\(annotation.quoted) is on the embedded type `\(name)`; an index over several properties is on an entity", at: annotation.location)
                continue
            }
            var modelNames: [String] = []
            for swiftName in names {
                guard let property = properties.first(where: { $0.name == swiftName }) else {
                    report("\(annotation.quoted) names `\(swiftName)`, which is not a stored property of `\(name)`", at: annotation.location)
                    break
                }
                guard !property.isId, ModelEntity.compoundIndexTypes.contains(property.propertyType) else {
                    report("\(annotation.quoted) names `\(name).\(swiftName)`, \(property.isId ? "the id" : "a \(property.propertyType)"); an index over several properties holds numbers, Bools, dates, ToOne relations, strings, Data, UUIDs and Decimals", at: annotation.location)
                    break
                }
                guard !modelNames.contains(property.modelName) else {
                    report("\(annotation.quoted) names `\(swiftName)` twice", at: annotation.location)
                    break
                }
                modelNames.append(property.modelName)
            }
            guard modelNames.count == names.count else { continue }
            if let same = indexes.first(where: { $0.properties == modelNames }) {
                report("\(annotation.quoted) repeats the index over \(names.joined(separator: ", "))\(same.unique == unique ? "" : " (once unique, once not: keep the unique one)")", at: annotation.location)
                continue
            }
            indexes.append(IndexDescription(properties: modelNames, unique: unique, location: annotation.location))
        }
        guard errors.count == errorCount else { return nil }
        var description = EntityDescription(typeName: name, modelName: entity.annotations.name ?? entity.scope.last!, kind: entity.kind,
                                 uid: entity.annotations.uid, properties: properties, relations: relations,
                                 isPublic: modifiers.contains { $0.name.tokenKind == .keyword(.public) || $0.name.tokenKind == .keyword(.open) },
                                 isEmbedded: entity.isEmbedded, isAsymmetric: entity.annotations.asymmetric != nil,
                                 location: entity.location)
        description.indexes = indexes
        return description
    }

    /// Reads the stored instance properties of an entity's members, reporting what cannot be
    /// stored (and annotations on members that are not stored).
    mutating func readProperties(_ members: MemberBlockItemListSyntax, of entity: EntityDeclaration, into candidates: inout [PropertyCandidate]) {
        let file = entity.file
        let name = entity.qualifiedName
        for member in members {
            let decl = member.decl
            guard let variable = decl.as(VariableDeclSyntax.self) else {
                if let ifConfig = decl.as(IfConfigDeclSyntax.self) {
                    checkConditional(ifConfig, of: entity)
                } else if !isTypeDeclaration(decl) {
                    // Functions, initializers, subscripts…: annotations there have no effect.
                    let (annotations, _) = Annotations.read(decl.firstToken(viewMode: .sourceAccurate).map { [$0] } ?? [], in: file)
                    if let annotation = annotations.first {
                        report("\(annotation.quoted) is on a declaration that is not a stored property, where it has no effect; remove it", at: annotation.location)
                    }
                }
                continue
            }
            let (raw, annotationErrors) = Annotations.read(headerTokens(decl, through: variable.bindingSpecifier), in: file)
            if let last = variable.lastToken(viewMode: .sourceAccurate), let annotation = Annotations.trailing(last, in: file).first {
                report("\(annotation.quoted) is at the end of a line, where it is not read: put it on its own line above the declaration", at: annotation.location)
            }
            let modifiers = variable.modifiers
            func has(_ keyword: Keyword) -> Bool { modifiers.contains { $0.name.tokenKind == .keyword(keyword) } }
            let isStatic = has(.static) || has(.class)
            let bindings = Array(variable.bindings)
            let isComputed = bindings.contains { binding in
                guard let accessors = binding.accessorBlock?.accessors else { return false }
                switch accessors {
                case .getter: return true
                case .accessors(let list):
                    return list.contains { ![.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
                }
            }
            let declLocation = file.location(of: decl)
            if isStatic || isComputed {
                if let annotation = raw.first {
                    report("\(annotation.quoted) is on a \(isStatic ? "static" : "computed") property, which is not stored; remove the annotation", at: annotation.location)
                }
                errors += annotationErrors
                continue
            }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            var bindingNames: [(String, SourceLocation)] = []
            for binding in bindings {
                let location = bindings.count == 1 ? declLocation : file.location(of: binding.pattern)
                guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else {
                    report("`\(binding.pattern.trimmedDescription)` declares several values in one pattern; declare each stored property with its own name (`var a = 0, b = 0`)", at: location)
                    continue
                }
                bindingNames.append((identifier.identifier.text.withoutBackticks, location))
            }
            let isIdCandidate = bindingNames.contains { $0.0 == "id" } || raw.contains { $0.name == "id" }
            guard annotationErrors.isEmpty else {
                errors += annotationErrors
                if isIdCandidate { candidates.append(failedCandidate(bindingNames.first)) }
                continue
            }
            let annotations: PropertyAnnotations
            do {
                annotations = try PropertyAnnotations(raw)
            } catch let error as GeneratorError {
                errors.append(error)
                if isIdCandidate { candidates.append(failedCandidate(bindingNames.first)) }
                continue
            } catch {
                report("\(error)", at: declLocation)
                continue
            }
            let subject = bindingNames.map { "`\(name).\($0.0)`" }.joined(separator: ", ")
            if let transient = annotations.transient {
                if let other = raw.first(where: { $0.name != "transient" }) {
                    report("\(other.quoted): \(subject) is transient (not stored), so the annotation has no effect; remove one of them", at: other.location)
                }
                if entity.kind == .struct {
                    for binding in bindings where binding.initializer == nil && (isLet || !isOptional(binding, in: bindings)) {
                        report("\(transient.quoted): a transient property of a struct needs an initial value, because the generated code creates objects with the memberwise initializer and has no value for it", at: transient.location)
                    }
                }
                continue
            }
            if has(.lazy) {
                report("\(subject): lazy properties cannot be stored, mark it transient (`// cellar: transient`)", at: declLocation)
                continue
            }
            if let modifier = modifiers.first(where: { [.keyword(.private), .keyword(.fileprivate)].contains($0.name.tokenKind) }) {
                report("\(subject) is \(modifier.trimmedDescription): the generated code (in another file) must read and write it; make it internal or public (or mark it `// cellar: transient`)", at: declLocation)
                if isIdCandidate { candidates.append(failedCandidate(bindingNames.first)) }
                continue
            }
            if isLet && entity.kind == .class {
                report("\(subject) is a `let`: the generated code creates objects with `init()` and then sets each stored property; make it var or transient", at: declLocation)
                if isIdCandidate { candidates.append(failedCandidate(bindingNames.first)) }
                continue
            }
            for (index, binding) in bindings.enumerated() {
                guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
                let propertyName = identifier.identifier.text.withoutBackticks
                let location = bindings.count == 1 ? declLocation : file.location(of: binding.pattern)
                if isLet && binding.initializer != nil {
                    report("`\(name).\(propertyName)` is a `let` with an initial value, which the memberwise initializer cannot set; make it var or transient", at: location)
                    if isIdCandidate { candidates.append(failedCandidate((propertyName, location))) }
                    continue
                }
                do {
                    let type = try declaredType(of: binding, at: index, in: bindings, property: "\(name).\(propertyName)",
                                                scope: entity.scope, location: location)
                    var unwrapped = type
                    var optional = false
                    if case .optional(let wrapped) = type {
                        unwrapped = wrapped
                        optional = true
                        if case .optional = wrapped {
                            throw GeneratorError("`\(name).\(propertyName)` is a double optional (\(type)), which cannot be stored; use a single optional", at: location)
                        }
                    }
                    candidates.append(PropertyCandidate(name: propertyName, location: location, annotations: annotations,
                                                        type: unwrapped, isOptional: optional, isLet: isLet,
                                                        initializer: binding.initializer?.value.trimmedDescription,
                                                        initializerExpression: binding.initializer?.value))
                } catch let error as GeneratorError {
                    errors.append(error)
                    candidates.append(failedCandidate((propertyName, location), annotations: annotations))
                } catch {
                    report("\(error)", at: location)
                }
            }
        }
    }

    /// A stand-in for a property that could not be read (its error is reported already).
    func failedCandidate(_ binding: (String, SourceLocation)?, annotations: PropertyAnnotations = PropertyAnnotations()) -> PropertyCandidate {
        PropertyCandidate(name: binding?.0 ?? "", location: binding?.1 ?? SourceLocation(file: "", line: 0, column: 0),
                          annotations: annotations, type: .other(""), isOptional: false, isLet: false, failed: true)
    }

    /// Whether a binding without initializer is optional (its own type or, in `var a, b: T?`, the
    /// type of the next binding that has one).
    func isOptional(_ binding: PatternBindingSyntax, in bindings: [PatternBindingSyntax]) -> Bool {
        guard let start = bindings.firstIndex(where: { $0.id == binding.id }),
              let annotation = bindings[start...].first(where: { $0.typeAnnotation != nil })?.typeAnnotation else { return false }
        if case .optional = TypeName(annotation.type) { return true }
        return false
    }

    /// Stored properties under `#if` cannot be described for every configuration: reports them.
    mutating func checkConditional(_ ifConfig: IfConfigDeclSyntax, of entity: EntityDeclaration) {
        for clause in ifConfig.clauses {
            guard case .decls(let members)? = clause.elements else { continue }
            for member in members {
                if let nested = member.decl.as(IfConfigDeclSyntax.self) {
                    checkConditional(nested, of: entity)
                    continue
                }
                guard let variable = member.decl.as(VariableDeclSyntax.self),
                      !variable.modifiers.contains(where: { [.keyword(.static), .keyword(.class)].contains($0.name.tokenKind) }),
                      variable.bindings.allSatisfy({ $0.accessorBlock == nil }) else { continue }
                report("`\(entity.qualifiedName)` declares stored properties inside `#if`, which the generator cannot follow; move them out of the `#if` (or make them computed)", at: entity.file.location(of: member.decl))
                return
            }
        }
    }

    func isTypeDeclaration(_ decl: DeclSyntax) -> Bool {
        decl.is(ClassDeclSyntax.self) || decl.is(StructDeclSyntax.self) || decl.is(EnumDeclSyntax.self)
            || decl.is(ActorDeclSyntax.self) || decl.is(ProtocolDeclSyntax.self) || decl.is(TypeAliasDeclSyntax.self)
    }
}
