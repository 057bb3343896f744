@_spi(CellarGenerated) import Cellar
import SwiftParser
import SwiftSyntax

/// Reads entity declarations from Swift sources with swift-syntax (no type checking, so types come
/// from type annotations and simple initializers).
///
/// An entity is a class or struct — at the top level or nested in another type, not declared in
/// an extension — whose inheritance clause names `Entity` (or `Cellar.Entity`) or that is annotated
/// `// cellar: entity`; one annotated `// cellar: embedded` is an embedded type (no id, stored
/// inside its owners' records), read the same way. Annotations are line comments `// cellar: …` (or `// objectbox: …`) on
/// the lines above a declaration (also between its attributes and its keyword); other comments and
/// doc comments are ignored. See `docs/generator.md` for the annotations and the property types.
///
/// Locations: an entity's is the start of its declaration (its first attribute, modifier or
/// keyword); a property's is the start of its `var`/`let` declaration, or the property's name when
/// one declaration declares several; an error about an annotation points at the annotation's `//`.
public enum SourceScanner {
    /// Parses the Swift files (path → contents) and returns every entity, in file order then
    /// declaration order (an entity nested in another comes after it).
    ///
    /// - Throws: every problem found, not just the first: one problem as a `GeneratorError`,
    ///   several as `GeneratorErrors` whose `messages` are the errors' descriptions
    ///   (`file:line:column: error: …`) in source order (by file, then line and column). Each
    ///   names the place and says how to fix it.
    public static func scan(files: [(path: String, contents: String)]) throws -> [EntityDescription] {
        var scan = Scan()
        for (index, file) in files.enumerated() {
            let tree = Parser.parse(source: file.contents)
            let scanned = ScannedFile(path: file.path, index: index,
                                      converter: SourceLocationConverter(fileName: file.path, tree: tree))
            scan.collect(statements: tree.statements, path: [], file: scanned)
        }
        let entities = scan.describeEntities()
        guard scan.errors.isEmpty else {
            let fileOrder = Dictionary(files.enumerated().map { ($0.element.path, $0.offset) }, uniquingKeysWith: { first, _ in first })
            let sorted = scan.errors.enumerated().sorted { a, b in
                func key(_ error: GeneratorError) -> (Int, Int, Int) {
                    guard let location = error.location else { return (Int.max, 0, 0) }
                    return (fileOrder[location.file] ?? Int.max, location.line, location.column)
                }
                let (ka, kb) = (key(a.element), key(b.element))
                return ka != kb ? ka < kb : a.offset < b.offset
            }.map(\.element)
            var unique: [GeneratorError] = []
            for error in sorted where !unique.contains(error) { unique.append(error) }
            if unique.count == 1 { throw unique[0] }
            throw GeneratorErrors(messages: unique.map(\.description))
        }
        return entities
    }
}

/// A parsed file: its path as given and how positions become line and column.
struct ScannedFile {
    var path: String
    var index: Int
    var converter: SourceLocationConverter

    func location(_ position: AbsolutePosition) -> SourceLocation {
        let location = converter.location(for: position)
        return SourceLocation(file: path, line: location.line, column: location.column)
    }

    func location(of node: some SyntaxProtocol) -> SourceLocation {
        location(node.positionAfterSkippingLeadingTrivia)
    }
}

/// An enum declared in the scanned sources, for properties stored by raw value.
private struct EnumInfo {
    var qualifiedName: String
    /// The first type in the inheritance clause (Swift puts the raw type first), if any.
    var firstInherited: TypeName?
    var cases: [String]
}

/// A class or struct found to be an entity, before its properties are read.
private struct EntityDeclaration {
    var decl: DeclSyntax
    var kind: EntityDescription.Kind
    /// `Outer.Name` for a nested type.
    var qualifiedName: String
    /// The enclosing types' names and the entity's own: the scope its properties' types are
    /// looked up in.
    var scope: [String]
    var annotations: TypeAnnotations
    var isGeneric: Bool
    /// `// cellar: embedded`: no id, stored inside its owners' records.
    var isEmbedded = false
    var file: ScannedFile
    var location: SourceLocation
}

/// A stored property read from the sources, before the id is chosen.
private struct PropertyCandidate {
    var name: String
    var location: SourceLocation
    var annotations: PropertyAnnotations
    /// The declared type without its optional marker.
    var type: TypeName
    var isOptional: Bool
    var isLet: Bool
    /// The initial value as written (`nil`, `[]`, `""`), if any.
    var initializer: String? = nil
    /// The initial value's syntax, evaluated for the property's default.
    var initializerExpression: ExprSyntax? = nil
    /// The property could not be read (an error was reported); it only keeps the "no id" error
    /// away when it was meant to be the id.
    var failed = false
}

/// The state of one scan: what pass one found and every error so far.
private struct Scan {
    var errors: [GeneratorError] = []
    var entities: [EntityDeclaration] = []
    var enums: [String: EnumInfo] = [:]
    /// The `// cellar: backlink` annotations of the described entities' `ToMany`s, by
    /// `Entity.property`: resolved once every entity is described.
    var backlinks: [String: (annotation: Annotation, name: String?)] = [:]

    mutating func report(_ message: String, at location: SourceLocation) {
        errors.append(GeneratorError(message, at: location))
    }

    // MARK: Pass one: find entities and enums

    mutating func collect(statements: CodeBlockItemListSyntax, path: [String], file: ScannedFile) {
        for statement in statements {
            guard case .decl(let decl) = statement.item else { continue }
            collect(decl: decl, path: path, inGeneric: false, inExtension: false, file: file)
        }
    }

    mutating func collect(members: MemberBlockItemListSyntax, path: [String], inGeneric: Bool, inExtension: Bool, file: ScannedFile) {
        for member in members {
            collect(decl: member.decl, path: path, inGeneric: inGeneric, inExtension: inExtension, file: file)
        }
    }

    mutating func collect(decl: DeclSyntax, path: [String], inGeneric: Bool, inExtension: Bool, file: ScannedFile) {
        if let ifConfig = decl.as(IfConfigDeclSyntax.self) {
            for clause in ifConfig.clauses {
                switch clause.elements {
                case .statements(let statements)?:
                    for statement in statements {
                        if case .decl(let inner) = statement.item {
                            collect(decl: inner, path: path, inGeneric: inGeneric, inExtension: inExtension, file: file)
                        }
                    }
                case .decls(let members)?:
                    collect(members: members, path: path, inGeneric: inGeneric, inExtension: inExtension, file: file)
                default:
                    break
                }
            }
        } else if let extensionDecl = decl.as(ExtensionDeclSyntax.self) {
            let extended = TypeName(extensionDecl.extendedType)
            let extendedPath: [String]
            if case .named(let name, _) = extended {
                extendedPath = name.split(separator: ".").map(String.init)
            } else {
                extendedPath = [extended.description]
            }
            collect(members: extensionDecl.memberBlock.members, path: extendedPath, inGeneric: inGeneric,
                    inExtension: true, file: file)
        } else if let enumDecl = decl.as(EnumDeclSyntax.self) {
            let name = enumDecl.name.text.withoutBackticks
            let qualified = (path + [name]).joined(separator: ".")
            var cases: [String] = []
            for member in enumDecl.memberBlock.members {
                if let caseDecl = member.decl.as(EnumCaseDeclSyntax.self) {
                    cases += caseDecl.elements.map { $0.name.text.withoutBackticks }
                }
            }
            enums[qualified] = EnumInfo(qualifiedName: qualified,
                                        firstInherited: enumDecl.inheritanceClause?.inheritedTypes.first.map { TypeName($0.type) },
                                        cases: cases)
            let (annotations, annotationErrors) = Annotations.read(headerTokens(decl, through: enumDecl.enumKeyword), in: file)
            errors += annotationErrors
            if namesEntity(enumDecl.inheritanceClause) || !annotations.isEmpty {
                report("`\(qualified)` is an enum: entities are classes or structs (an enum stored in a property needs `// cellar: convert = { \"default\": \".caseName\" }` on that property); remove \(annotations.first.map { "the annotation \($0.quoted)" } ?? "the `Entity` conformance")",
                       at: annotations.first?.location ?? file.location(of: decl))
            }
            collect(members: enumDecl.memberBlock.members, path: path + [name], inGeneric: inGeneric || enumDecl.genericParameterClause != nil,
                    inExtension: inExtension, file: file)
        } else if let classDecl = decl.as(ClassDeclSyntax.self) {
            collectType(decl, kind: .class, name: classDecl.name, keyword: classDecl.classKeyword,
                        inheritance: classDecl.inheritanceClause, generic: classDecl.genericParameterClause != nil,
                        members: classDecl.memberBlock.members, path: path, inGeneric: inGeneric, inExtension: inExtension, file: file)
        } else if let structDecl = decl.as(StructDeclSyntax.self) {
            collectType(decl, kind: .struct, name: structDecl.name, keyword: structDecl.structKeyword,
                        inheritance: structDecl.inheritanceClause, generic: structDecl.genericParameterClause != nil,
                        members: structDecl.memberBlock.members, path: path, inGeneric: inGeneric, inExtension: inExtension, file: file)
        } else if let actorDecl = decl.as(ActorDeclSyntax.self) {
            collectType(decl, kind: nil, name: actorDecl.name, keyword: actorDecl.actorKeyword,
                        inheritance: actorDecl.inheritanceClause, generic: actorDecl.genericParameterClause != nil,
                        members: actorDecl.memberBlock.members, path: path, inGeneric: inGeneric, inExtension: inExtension, file: file)
        }
    }

    /// A class, struct (`kind`) or actor (`kind` nil): records it when it is an entity, else
    /// reports annotations that would have no effect; then looks at its nested types.
    mutating func collectType(_ decl: DeclSyntax, kind: EntityDescription.Kind?, name nameToken: TokenSyntax, keyword: TokenSyntax,
                              inheritance: InheritanceClauseSyntax?, generic: Bool, members: MemberBlockItemListSyntax,
                              path: [String], inGeneric: Bool, inExtension: Bool, file: ScannedFile) {
        let name = nameToken.text.withoutBackticks
        let qualified = (path + [name]).joined(separator: ".")
        let location = file.location(of: decl)
        let (annotations, annotationErrors) = Annotations.read(headerTokens(decl, through: keyword), in: file)
        errors += annotationErrors
        let conforms = namesEntity(inheritance)
        let isEmbedded = annotations.contains { $0.name == "embedded" }
        let isEntity = conforms || isEmbedded || annotations.contains { $0.name == "entity" }
        let what = isEmbedded ? "embedded types" : "entities"
        if isEntity, let kind, !inExtension {
            do {
                let typeAnnotations = try TypeAnnotations(annotations)
                if let embedded = typeAnnotations.embedded {
                    if conforms {
                        throw GeneratorError("`\(qualified)` is annotated \(embedded.quoted) but conforms to `Entity`: an embedded type has no id and no box (its objects are stored inside their owners' records); remove the `Entity` conformance, or remove the annotation to keep it an entity", at: embedded.location)
                    }
                    if let entity = typeAnnotations.entity {
                        throw GeneratorError("`\(qualified)` is annotated both \(entity.quoted) and \(embedded.quoted): a type is either an entity (with an id and a box) or embedded in other objects; keep one of the annotations", at: entity.location)
                    }
                }
                entities.append(EntityDeclaration(decl: decl, kind: kind, qualifiedName: qualified, scope: path + [name],
                                                  annotations: typeAnnotations, isGeneric: generic || inGeneric,
                                                  isEmbedded: isEmbedded, file: file, location: location))
            } catch let error as GeneratorError {
                errors.append(error)
            } catch {
                report("\(error)", at: location)
            }
        } else if isEntity && kind == nil {
            report("`\(qualified)` is an actor: \(what) are classes or structs; declare it as a class or struct", at: location)
        } else if isEntity {
            report("`\(qualified)` is declared in an extension, where the generator does not look for \(what); declare it at the top level or nested in a type declaration", at: location)
        } else if annotations.contains(where: { $0.name == ProjectionScanner.annotationName }) {
            // A projection: `ProjectionScanner` reads it and its fields' annotations.
        } else {
            if let annotation = annotations.first {
                report("\(annotation.quoted) is on `\(qualified)`, which is not an entity: conform it to `Entity` or annotate it `// cellar: entity`, or remove the annotation", at: annotation.location)
            }
            // Property annotations in a type that is not an entity are a forgotten conformance.
            for member in members {
                guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
                let (propertyAnnotations, _) = Annotations.read(headerTokens(member.decl, through: variable.bindingSpecifier), in: file)
                if let annotation = propertyAnnotations.first {
                    report("\(annotation.quoted) is in `\(qualified)`, which is not an entity: conform it to `Entity` or annotate it `// cellar: entity`, or remove the annotation", at: annotation.location)
                    break
                }
            }
        }
        collect(members: members, path: path + [name], inGeneric: inGeneric || generic, inExtension: inExtension, file: file)
    }

    /// Whether an inheritance clause names `Entity` or `Cellar.Entity` (also in a composition).
    func namesEntity(_ clause: InheritanceClauseSyntax?) -> Bool {
        guard let clause else { return false }
        func names(_ type: TypeSyntax) -> Bool {
            if let composition = type.as(CompositionTypeSyntax.self) {
                return composition.elements.contains { names($0.type) }
            }
            let name = TypeName(type)
            return name == .named("Entity", []) || name == .named("Cellar.Entity", [])
        }
        return clause.inheritedTypes.contains { names($0.type) }
    }

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
        guard errors.count == errorCount else { return nil }
        return EntityDescription(typeName: name, modelName: entity.annotations.name ?? entity.scope.last!, kind: entity.kind,
                                 uid: entity.annotations.uid, properties: properties, relations: relations,
                                 isPublic: modifiers.contains { $0.name.tokenKind == .keyword(.public) || $0.name.tokenKind == .keyword(.open) },
                                 isEmbedded: entity.isEmbedded, location: entity.location)
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

    // MARK: Types

    /// The declared type of a binding: its type annotation, the one of the next binding in
    /// `var a, b: T`, or one inferred from a simple initializer.
    func declaredType(of binding: PatternBindingSyntax, at index: Int, in bindings: [PatternBindingSyntax], property: String,
                      scope: [String], location: SourceLocation) throws -> TypeName {
        if let annotation = binding.typeAnnotation { return TypeName(annotation.type) }
        guard let initializer = binding.initializer else {
            if let next = bindings[index...].first(where: { $0.typeAnnotation != nil })?.typeAnnotation {
                return TypeName(next.type)
            }
            throw GeneratorError("`\(property)` has no type: add a type annotation", at: location)
        }
        if let type = inferType(initializer.value, scope: scope) { return type }
        throw GeneratorError("the type of `\(property)` cannot be inferred from `\(initializer.value.trimmedDescription)` without type checking: add a type annotation (`var \(property.split(separator: ".").last!): Type = …`)", at: location)
    }

    /// The type of a simple initializer: a literal, `-` and a number, `T(…)` of a built-in or
    /// Cellar type, `[UInt8]()`, `x as T`, `Enum.case` of an enum in the sources, and a few static
    /// members of built-in types (`Date.now`, `Int.max`). Nil for anything else.
    func inferType(_ expression: ExprSyntax, scope: [String]) -> TypeName? {
        if expression.is(StringLiteralExprSyntax.self) { return .named("String", []) }
        if expression.is(IntegerLiteralExprSyntax.self) { return .named("Int", []) }
        if expression.is(FloatLiteralExprSyntax.self) { return .named("Double", []) }
        if expression.is(BooleanLiteralExprSyntax.self) { return .named("Bool", []) }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            if prefix.expression.is(IntegerLiteralExprSyntax.self) { return .named("Int", []) }
            if prefix.expression.is(FloatLiteralExprSyntax.self) { return .named("Double", []) }
            return nil
        }
        if let sequence = expression.as(SequenceExprSyntax.self) {
            let elements = Array(sequence.elements)
            if elements.count == 3, let cast = elements[1].as(UnresolvedAsExprSyntax.self), cast.questionOrExclamationMark == nil,
               let type = elements[2].as(TypeExprSyntax.self) {
                return TypeName(type.type)
            }
            return nil
        }
        if let unwrap = expression.as(ForceUnwrapExprSyntax.self), let call = unwrap.expression.as(FunctionCallExprSyntax.self),
           let type = TypeName(expression: call.calledExpression), isConstructible(type) {
            return type
        }
        if let call = expression.as(FunctionCallExprSyntax.self) {
            // `Address()`, `Address(city: "…")`: an embedded type's initializer.
            if let type = TypeName(expression: call.calledExpression), case .named(let name, let arguments) = type, arguments.isEmpty,
               resolveEmbedded(name, scope: scope) != nil {
                return type
            }
            guard let type = TypeName(expression: call.calledExpression), isConstructible(type) else { return nil }
            // Initializers that return an optional: `Int("5")`, `Int(exactly: x)`, `Data(base64Encoded: s)`.
            let labels = call.arguments.compactMap { $0.label?.text }
            if labels.contains("exactly") || labels.contains("base64Encoded") { return nil }
            if let first = call.arguments.first, first.label == nil, first.expression.is(StringLiteralExprSyntax.self),
               let stored = TypeMapping.builtIn(type), stored.propertyType != .string { return nil }
            return type
        }
        if let member = expression.as(MemberAccessExprSyntax.self), let base = member.base,
           let type = TypeName(expression: base), case .named(let baseName, let arguments) = type, arguments.isEmpty {
            if resolveEnum(baseName, scope: scope) != nil { return type }
            let staticMembers = ["max", "min", "zero", "now", "distantPast", "distantFuture", "pi", "infinity", "greatestFiniteMagnitude"]
            if let stored = TypeMapping.builtIn(type), stored.propertyType != .byteVector,
               staticMembers.contains(member.declName.baseName.text) {
                return type
            }
        }
        return nil
    }

    /// Built-in types, `Id`, `EntityId<T>` and `ToOne<T>`: the types `T(…)` infers.
    func isConstructible(_ type: TypeName) -> Bool {
        TypeMapping.builtIn(type) != nil || TypeMapping.collection(type) != nil || TypeMapping.isFlex(type) || type.argument(ofGeneric: "ToOne") != nil || type.argument(ofGeneric: "EntityId") != nil
    }

    /// Looks a (possibly dotted) type name up as Swift would from `scope`: innermost type first.
    func resolveEnum(_ name: String, scope: [String]) -> EnumInfo? {
        var prefix = scope
        while true {
            if let info = enums[(prefix + [name]).joined(separator: ".")] { return info }
            if prefix.isEmpty { return nil }
            prefix.removeLast()
        }
    }

    /// The entity a (possibly dotted) type name names, looked up from `scope` like `resolveEnum`
    /// (nil for an embedded type).
    func resolveEntity(_ name: String, scope: [String]) -> EntityDeclaration? {
        resolveDeclaration(name, scope: scope).flatMap { $0.isEmbedded ? nil : $0 }
    }

    /// The embedded type (`// cellar: embedded`) a type name names, looked up like `resolveEntity`.
    func resolveEmbedded(_ name: String, scope: [String]) -> EntityDeclaration? {
        resolveDeclaration(name, scope: scope).flatMap { $0.isEmbedded ? $0 : nil }
    }

    /// The entity or embedded type a (possibly dotted) type name names, innermost scope first.
    func resolveDeclaration(_ name: String, scope: [String]) -> EntityDeclaration? {
        var prefix = scope
        while true {
            let qualified = (prefix + [name]).joined(separator: ".")
            if let entity = entities.first(where: { $0.qualifiedName == qualified }) { return entity }
            if prefix.isEmpty { return nil }
            prefix.removeLast()
        }
    }

    /// A `ToOne` or `ToMany` whose target is an embedded type, which has no id to point at.
    func embeddedRelationTarget(_ subject: String, type: TypeName, embedded: EntityDeclaration, name: String, location: SourceLocation) -> GeneratorError {
        let short = embedded.scope.last!
        let store = type.unqualifiedName == "ToMany" ? "var \(name): [\(short)] = []" : "var \(name): \(short)?"
        return GeneratorError("\(subject) is a \(type), but \(embedded.qualifiedName) is an embedded type (`// cellar: embedded`), which has no id to relate to: store it inside the object, `\(store)`, or make it an entity (conform it to `Entity`)", at: location)
    }

    /// Whether `type` is `EntityId<X>` with X the entity itself (or `Self`).
    func isOwnEntityId(_ type: TypeName, of entity: EntityDeclaration) -> Bool {
        guard let argument = type.argument(ofGeneric: "EntityId"), case .named(let target, let arguments) = argument,
              arguments.isEmpty else { return false }
        return target == "Self" || resolveEntity(target, scope: entity.scope)?.qualifiedName == entity.qualifiedName
    }

    /// Id types: `Id`, `UInt64`, `EntityId<Self>`; with `strict` false (a property annotated
    /// `// cellar: id`) also `Int64`, `Int` and `UInt`.
    func isIdType(_ type: TypeName, of entity: EntityDeclaration, strict: Bool) -> Bool {
        if isOwnEntityId(type, of: entity) { return true }
        guard type.genericArguments.isEmpty, let name = type.unqualifiedName else { return false }
        return strict ? ["Id", "UInt64"].contains(name) : ["Id", "UInt64", "Int64", "Int", "UInt"].contains(name)
    }

    // MARK: Describing properties

    func describeId(_ candidate: PropertyCandidate, of entity: EntityDeclaration) throws -> PropertyDescription {
        let subject = "`\(entity.qualifiedName).\(candidate.name)`"
        let annotations = candidate.annotations
        let own = entity.scope.last!
        guard !candidate.isOptional else {
            throw GeneratorError("the id \(subject) is optional: an id is never nil (0 means \"not stored yet\"); declare it `var \(candidate.name): Id = 0`", at: candidate.location)
        }
        guard isIdType(candidate.type, of: entity, strict: false) else {
            if candidate.type.argument(ofGeneric: "EntityId") != nil {
                throw GeneratorError("the id \(subject) is \(candidate.type), which names another type: the id of \(own) must be EntityId<\(own)> (or Id)", at: candidate.location)
            }
            throw GeneratorError("\(annotations.id?.quoted ?? "the id") is on \(subject), a \(candidate.type): the id must be a 64-bit integer (Id, UInt64, Int64, Int, UInt) or EntityId<\(own)>", at: annotations.id?.location ?? candidate.location)
        }
        guard !candidate.isLet else {
            throw GeneratorError("the id \(subject) is a `let`: `put` writes the new id back, so declare it `var`", at: candidate.location)
        }
        if let other = annotations.all.first(where: { !["id", "name", "uid"].contains($0.name) }) {
            throw GeneratorError("\(other.quoted) cannot be used on the id \(subject) (the id is stored as it is, indexed and unique already); remove it", at: other.location)
        }
        var flags: PropertyFlags = .id
        if annotations.idAssignable { flags.insert(.idSelfAssignable) }
        return PropertyDescription(name: candidate.name, modelName: annotations.name ?? candidate.name, swiftType: candidate.type.description,
                                   isOptional: false, propertyType: .long, storedSwiftType: "Id", flags: flags,
                                   isId: true, idAssignable: annotations.idAssignable,
                                   isTypedId: candidate.type.argument(ofGeneric: "EntityId") != nil,
                                   uid: annotations.uid, location: candidate.location)
    }

    /// What an embedded type's stored property cannot be: an id (`// cellar: id`, `id` of an id
    /// type, an `EntityId`), a relation, a primary key or unique.
    func checkEmbeddedMember(_ candidate: PropertyCandidate, of entity: EntityDeclaration) throws {
        let subject = "`\(entity.qualifiedName).\(candidate.name)`"
        let annotations = candidate.annotations
        let own = entity.qualifiedName
        if let id = annotations.id {
            throw GeneratorError("\(id.quoted) is on \(subject), but \(own) is an embedded type (`// cellar: embedded`), which has no id: its objects are stored inside their owners' records; remove the annotation (or make \(own) an entity, conforming to `Entity`, and relate to it with ToOne)", at: id.location)
        }
        if candidate.type.argument(ofGeneric: "EntityId") != nil
            || (candidate.type.unqualifiedName == "Id" && candidate.type.genericArguments.isEmpty) {
            throw GeneratorError("\(subject) is \(candidate.isOptional ? "an optional " : "an ")\(candidate.type), an id, but \(own) is an embedded type (`// cellar: embedded`), which has no id: its objects are stored inside their owners' records; remove the property (or make \(own) an entity, conforming to `Entity`, and relate to it with ToOne), or keep another object's id as a UInt64", at: candidate.location)
        }
        if let target = candidate.type.argument(ofGeneric: "ToOne") ?? candidate.type.argument(ofGeneric: "ToMany") {
            let kind = candidate.type.unqualifiedName ?? "ToOne"
            throw GeneratorError("\(subject) is a \(kind)<\(target)>, but \(own) is an embedded type: embedded objects cannot hold relations yet; keep the relation in the entity that owns the \(own), or store the target's id as a UInt64", at: candidate.location)
        }
        if let primaryKey = annotations.primaryKey {
            throw GeneratorError("\(primaryKey.quoted) is on \(subject), but \(own) is an embedded type, which has no box to look its objects up in: an embedded object's property cannot be a primary key; remove the annotation (`// cellar: index` makes it searchable)", at: primaryKey.location)
        }
        if let unique = annotations.unique {
            throw GeneratorError("\(unique.quoted) is on \(subject): an embedded object's property cannot be unique (the same object may be stored in several owners); remove it, or use `// cellar: index`", at: unique.location)
        }
    }

    /// A property holding one embedded object (`var address: Address?`, `var address = Address()`)
    /// or a list of them (`var lines: [OrderLine]`, `[OrderLine]?`): type code 101 or 1101.
    func describeEmbedded(_ candidate: PropertyCandidate, of entity: EntityDeclaration, embedded: EntityDeclaration, isList: Bool,
                          subject: String, into described: PropertyDescription) throws -> PropertyDescription {
        var property = described
        let annotations = candidate.annotations
        let what = isList ? "a list of embedded \(embedded.qualifiedName) objects" : "an embedded \(embedded.qualifiedName)"
        if let other = annotations.all.first(where: { !["name", "uid"].contains($0.name) }) {
            let hint = ["index", "unique", "primaryKey"].contains(other.name)
                ? " (index a property of \(embedded.qualifiedName) instead: `// cellar: index` on it)" : ""
            throw GeneratorError("\(other.quoted) cannot be used on \(subject), \(what)\(hint): it accepts uid and name; remove it", at: other.location)
        }
        property.embeddedType = embedded.qualifiedName
        property.storedSwiftType = embedded.qualifiedName
        if isList {
            property.propertyType = PropertyType(rawValue: EntityDescription.embeddedListTypeCode)
            property.elementSwiftType = embedded.qualifiedName
            try checkStartsEmpty(candidate, subject: subject, empty: "[]", reads: "an empty list")
            return property
        }
        property.propertyType = PropertyType(rawValue: EntityDescription.embeddedTypeCode)
        if !candidate.isOptional {
            guard let initializer = candidate.initializer else {
                throw GeneratorError("\(subject) is a non-optional \(embedded.qualifiedName) without an initial value: a record without the object (written before the property existed) needs a value to read; declare it optional (`var \(candidate.name): \(candidate.type)?`) or give it an initial value (`var \(candidate.name) = \(candidate.type)()`)", at: candidate.location)
            }
            property.embeddedInitializer = initializer
        }
        return property
    }

    func describeProperty(_ candidate: PropertyCandidate, of entity: EntityDeclaration) throws -> PropertyDescription {
        let subject = "`\(entity.qualifiedName).\(candidate.name)`"
        let annotations = candidate.annotations
        let type = candidate.type
        let location = candidate.location
        var property = PropertyDescription(name: candidate.name, modelName: annotations.name ?? candidate.name, swiftType: type.description,
                                           isOptional: candidate.isOptional, propertyType: .long, storedSwiftType: "",
                                           uid: annotations.uid, location: location)

        if let backlink = annotations.backlink {
            throw GeneratorError("\(backlink.quoted) is on \(subject), a \(type): a backlink is a ToMany (`var \(candidate.name): ToMany<Target> = nil`); remove the annotation or make the property a ToMany", at: backlink.location)
        }
        if let target = type.argument(ofGeneric: "ToOne") {
            if let other = annotations.all.first(where: { !["name", "uid"].contains($0.name) }) {
                throw GeneratorError("\(other.quoted) cannot be used on the relation \(subject) (a ToOne is stored as the target's id, always indexed); remove it", at: other.location)
            }
            guard !candidate.isOptional else {
                throw GeneratorError("\(subject) is an optional ToOne: a ToOne is never optional (it holds no target when empty); declare it `var \(candidate.name): \(type) = nil`", at: location)
            }
            if case .named(let targetName, let arguments) = target, arguments.isEmpty,
               let embedded = resolveEmbedded(targetName, scope: entity.scope) {
                throw embeddedRelationTarget(subject, type: type, embedded: embedded, name: candidate.name, location: location)
            }
            guard case .named(let targetName, let arguments) = target, arguments.isEmpty,
                  let targetEntity = resolveEntity(targetName, scope: entity.scope) else {
                throw GeneratorError("\(subject) is a \(type), but \(target.description.isEmpty ? "it names no target type" : "`\(target)` is not an entity in the scanned sources"): a ToOne<T> needs T to conform to `Entity` (or be annotated `// cellar: entity`)", at: location)
            }
            property.propertyType = .relation
            property.storedSwiftType = "Id"
            property.flags = [.indexed, .indexPartialSkipZero]
            property.index = .value
            property.relationTarget = targetEntity.qualifiedName
            return property
        }
        if type.argument(ofGeneric: "EntityId") != nil {
            throw GeneratorError("\(subject) is a \(type): EntityId is only for the id property of its own entity; use Id to keep another object's id, or ToOne<T> for a relation", at: location)
        }

        var stored: StoredType
        if let convert = annotations.convert, let spec = annotations.convertSpec {
            stored = try conversion(spec, convert, for: candidate, subject: subject, entity: entity, into: &property)
        } else if let builtIn = TypeMapping.builtIn(type) {
            stored = builtIn
        } else if case .named(let typeName, let arguments) = type, arguments.isEmpty, let embedded = resolveEmbedded(typeName, scope: entity.scope) {
            return try describeEmbedded(candidate, of: entity, embedded: embedded, isList: false, subject: subject, into: property)
        } else if let collection = TypeMapping.collection(type), case .named(let typeName, let arguments) = collection.element,
                  arguments.isEmpty, let embedded = resolveEmbedded(typeName, scope: entity.scope) {
            guard collection.kind == .list else {
                throw GeneratorError("\(subject) is a \(type): embedded objects are stored one by one or in a list; declare it `[\(typeName)]`", at: location)
            }
            return try describeEmbedded(candidate, of: entity, embedded: embedded, isList: true, subject: subject, into: property)
        } else if TypeMapping.isFlex(type) {
            return try describeFlex(candidate, subject: subject, into: property)
        } else if let collection = TypeMapping.collection(type) {
            return try describeCollection(candidate, collection, subject: subject, entity: entity, into: property)
        } else if case .named(let typeName, let arguments) = type, arguments.isEmpty, let info = resolveEnum(typeName, scope: entity.scope) {
            let example = info.cases.contains("unknown") ? ".unknown" : info.cases.first.map { ".\($0)" } ?? ".caseName"
            throw GeneratorError("\(subject) is the enum \(info.qualifiedName): store its raw value with `// cellar: convert = { \"default\": \"\(example)\" }` (the default is read when the stored value is missing or unknown)", at: location)
        } else if case .named(let typeName, let arguments) = type, arguments.isEmpty, let target = resolveEntity(typeName, scope: entity.scope) {
            throw GeneratorError("\(subject) is the entity \(target.qualifiedName), which cannot be stored inside another object: use a relation, `var \(candidate.name): ToOne<\(typeName)> = nil`", at: location)
        } else {
            throw GeneratorError("\(subject) is a \(type), which cannot be stored: use a relation (a new entity for the elements), or a `// cellar: convert` to a built-in type such as a JSON String (built-in types: \(TypeMapping.builtInNames))", at: location)
        }

        if let dateNano = annotations.dateNano {
            guard stored.propertyType == .date else {
                throw GeneratorError("\(dateNano.quoted) is on \(subject), which is stored as \(stored.swiftName): date-nano is for Date properties; remove it", at: dateNano.location)
            }
            stored.propertyType = .dateNano
            property.dateNano = true
        }
        property.propertyType = stored.propertyType
        property.storedSwiftType = stored.swiftName
        var flags = stored.flags
        for annotation in [annotations.index, annotations.unique].compactMap({ $0 }) where !stored.isIndexable {
            throw GeneratorError("\(annotation.quoted) is on \(subject), which is stored as \(stored.swiftName): Cellar, like ObjectBox, cannot index Float, Double or byte vector (Data, [UInt8]) properties; remove the annotation", at: annotation.location)
        }
        if let index = annotations.index, let kind = annotations.indexKind, kind != .value, stored.propertyType != .string {
            throw GeneratorError("\(index.quoted) is on \(subject), which is stored as \(stored.swiftName): hash indexes are for String properties; use `// cellar: index` (a value index)", at: index.location)
        }
        // As in ObjectBox, a String's index is a hash index unless `index = "value"` says otherwise.
        // In an embedded type it is a value index (values such as a zip code or a SKU are short,
        // and the index then orders them); `index = "hash"` asks for a hash index.
        let defaultKind: PropertyDescription.IndexKind = stored.propertyType == .string && !entity.isEmbedded ? .hash : .value
        if annotations.unique != nil {
            flags.formUnion([.unique, .indexed])
            property.unique = true
            property.index = defaultKind
            if defaultKind == .hash && annotations.indexKind == nil { flags.insert(.indexHash) }
            if annotations.uniqueOnConflictReplace {
                flags.insert(.uniqueOnConflictReplace)
                property.uniqueOnConflictReplace = true
            }
        }
        if let primaryKey = annotations.primaryKey {
            // A String, UUID or integer identity: unique, through a value index (also for a String,
            // unlike `unique` alone: keys are short, and a look-up then reads no record to rule out
            // a hash collision), unless `index` says otherwise.
            guard stored.isInteger || [.string, .uuid].contains(stored.propertyType), property.conversion == .none else {
                throw GeneratorError("\(primaryKey.quoted) is on \(subject), stored as \(stored.swiftName): a primary key is a String, a UUID or an integer, stored as it is (no converter or enum)", at: primaryKey.location)
            }
            if annotations.uniqueOnConflictReplace {
                throw GeneratorError("\(primaryKey.quoted) is on \(subject), whose `unique` replaces on conflict: a primary key identifies its object, so a put with a stored key updates that object (`put(_:mode: .upsert)`); remove `onConflict`", at: primaryKey.location)
            }
            flags.formUnion([.unique, .indexed, .primaryKey])
            property.unique = true
            if annotations.indexKind == nil || annotations.indexKindIsDefault {
                flags.subtract([.indexHash, .indexHash64])
                property.setIndex(.value, flags: &flags)
            }
        }
        if let kind = annotations.indexKind, annotations.primaryKey == nil || !annotations.indexKindIsDefault {
            property.setIndex(annotations.indexKindIsDefault ? defaultKind : kind, flags: &flags)
        }
        property.flags = flags
        property.defaultValue = try defaultValue(of: candidate, stored: stored, conversion: property.conversion, subject: subject)
        return property
    }

    /// A list, set or map property (`[T]`, `Set<T>`, `[String: T]`) of a built-in element type.
    func describeCollection(_ candidate: PropertyCandidate, _ collection: (kind: CollectionShape.Kind, element: TypeName, key: TypeName?),
                            subject: String, entity: EntityDeclaration, into described: PropertyDescription) throws -> PropertyDescription {
        var property = described
        let annotations = candidate.annotations
        let location = candidate.location
        let type = candidate.type
        let what = switch collection.kind {
        case .list: "a list"
        case .set: "a set"
        case .map: "a map"
        }
        if let key = collection.key, key.unqualifiedName != "String" || !key.genericArguments.isEmpty {
            throw GeneratorError("\(subject) is a \(type): a map's keys must be String; keep the keys as strings (e.g. `String(key)`) or use a relation to a new entity for the entries", at: location)
        }
        let element = collection.element
        guard var stored = TypeMapping.builtIn(element) else {
            let elements = "Bool, the integer types, Float, Double, String, Date, Data and UUID"
            if case .named(let name, let arguments) = element, arguments.isEmpty, let target = resolveEntity(name, scope: entity.scope) {
                throw GeneratorError("\(subject) is a \(type): \(what) can hold \(elements), not objects of the entity \(target.qualifiedName); use a relation, `var \(candidate.name): ToMany<\(name)> = nil`", at: location)
            }
            if case .named(_, let arguments) = element, arguments.isEmpty {
                // An enum or another custom type: it would need a converter per element.
                throw GeneratorError("\(subject) is a \(type): \(what) can hold \(elements), not types with a converter; store their raw values (e.g. `[Int]` or `[String]`) and map them in code, convert the whole collection to one built-in value (such as a JSON String) with `// cellar: convert`, or replace it with a relation to a new entity for the elements", at: location)
            }
            throw GeneratorError("\(subject) is a \(type): \(what) can hold \(elements); use a relation (`ToMany<T>`) for objects, or a `FlexValue` for nested, mixed data", at: location)
        }
        if element.isByteArray {
            throw GeneratorError("\(subject) is a \(type): write its elements as `Data` (`\(type.description.replacingOccurrences(of: "[UInt8]", with: "Data"))`)", at: location)
        }
        if element.unqualifiedName == "Id" { stored.swiftName = "UInt64" }
        if let dateNano = annotations.dateNano {
            guard stored.propertyType == .date else {
                throw GeneratorError("\(dateNano.quoted) is on \(subject), whose elements are \(stored.swiftName): date-nano is for Date elements; remove it", at: dateNano.location)
            }
            stored.propertyType = .dateNano
            property.dateNano = true
        }
        let propertyType: PropertyType? = switch collection.kind {
        case .list: .list(of: stored.propertyType)
        case .set: .set(of: stored.propertyType)
        case .map: .map(of: stored.propertyType)
        }
        property.propertyType = propertyType!
        property.collection = property.propertyType.collection
        property.elementSwiftType = stored.swiftName
        property.storedSwiftType = type.description
        var flags = stored.flags
        if let primaryKey = annotations.primaryKey {
            throw GeneratorError("\(primaryKey.quoted) is on \(subject), \(what): a primary key is a String, a UUID or an integer", at: primaryKey.location)
        }
        if let unique = annotations.unique {
            throw GeneratorError("\(unique.quoted) is on \(subject), \(what): a collection cannot be unique (its index has a key per element); remove it, or use `// cellar: index`", at: unique.location)
        }
        if let index = annotations.index, var kind = annotations.indexKind {
            guard collection.kind != .map else {
                throw GeneratorError("\(index.quoted) is on \(subject), a map: lists and sets can be indexed (a key per element), maps cannot; remove the annotation", at: index.location)
            }
            guard stored.isIndexable else {
                throw GeneratorError("\(index.quoted) is on \(subject), whose elements are \(stored.swiftName): Cellar, like ObjectBox, cannot index Float, Double or byte vector (Data) values; remove the annotation", at: index.location)
            }
            if kind != .value && stored.propertyType != .string && !annotations.indexKindIsDefault {
                throw GeneratorError("\(index.quoted) is on \(subject), whose elements are \(stored.swiftName): hash indexes are for String elements; use `// cellar: index` (a value index)", at: index.location)
            }
            // A value index by default, also for strings (unlike a String property's hash index):
            // elements such as tags are short, and the index alone then answers `contains`.
            if annotations.indexKindIsDefault { kind = .value }
            property.setIndex(kind, flags: &flags)
        }
        property.flags = flags
        try checkStartsEmpty(candidate, subject: subject, empty: collection.kind == .map ? "[:]" : "[]", reads: "an empty \(collection.kind)")
        return property
    }

    /// A collection or Flex property reads empty (`.null`) for records written before it existed:
    /// a non-optional one must start so (or have no initial value), and takes no `default`.
    func checkStartsEmpty(_ candidate: PropertyCandidate, subject: String, empty: String, reads: String) throws {
        if let annotation = candidate.annotations.defaultAnnotation {
            throw GeneratorError("\(annotation.quoted) is on \(subject): records written before the property existed read \(reads) (nil when optional); remove the annotation", at: annotation.location)
        }
        guard !candidate.isOptional, let expression = candidate.initializerExpression else { return }
        let isEmpty: Bool
        if empty == ".null" {
            isEmpty = expression.as(MemberAccessExprSyntax.self)?.declName.baseName.text == "null" || expression.is(NilLiteralExprSyntax.self)
        } else if let array = expression.as(ArrayExprSyntax.self) {
            isEmpty = array.elements.isEmpty
        } else if let dictionary = expression.as(DictionaryExprSyntax.self) {
            if case .colon = dictionary.content { isEmpty = true } else { isEmpty = false }
        } else if let call = expression.as(FunctionCallExprSyntax.self) {
            isEmpty = call.arguments.isEmpty && call.trailingClosure == nil   // `[String]()`, `Set<Int>()`
        } else {
            isEmpty = false
        }
        guard isEmpty else {
            throw GeneratorError("\(subject) starts as `\(expression.trimmedDescription)`, but records written before the property existed read \(reads), not that value; start it as `\(empty)` and fill it in code, or make it optional", at: candidate.location)
        }
    }

    /// A `FlexValue` property: a self-describing value of any shape (Flex, type 13).
    func describeFlex(_ candidate: PropertyCandidate, subject: String, into described: PropertyDescription) throws -> PropertyDescription {
        var property = described
        for annotation in [candidate.annotations.index, candidate.annotations.unique, candidate.annotations.dateNano,
                           candidate.annotations.primaryKey].compactMap({ $0 }) {
            throw GeneratorError("\(annotation.quoted) is on \(subject), a FlexValue: a flexible value can be neither indexed, unique nor a primary key, and has no date-nano form; remove the annotation", at: annotation.location)
        }
        try checkStartsEmpty(candidate, subject: subject, empty: ".null", reads: "`.null`")
        property.propertyType = PropertyType(rawValue: 13)
        property.storedSwiftType = "FlexValue"
        property.isFlex = true
        return property
    }

    /// The value a record without the property reads: `// cellar: default`, else the evaluated
    /// initial value of a non-optional property stored as it is; nil for the zero value.
    func defaultValue(of candidate: PropertyCandidate, stored: StoredType, conversion: PropertyDescription.Conversion,
                      subject: String) throws -> DefaultValue? {
        let name = candidate.name
        if let annotation = candidate.annotations.defaultAnnotation, let json = candidate.annotations.defaultValue {
            guard !candidate.isOptional else {
                throw GeneratorError("\(annotation.quoted) is on \(subject), an optional: a record without the property reads nil (a stored nil is written the same way), so it has no default; remove the annotation or make the property non-optional", at: annotation.location)
            }
            switch conversion {
            case .none: break
            case .rawValue:
                throw GeneratorError("\(annotation.quoted) is on \(subject), an enum stored by its raw value: its default is the case in `// cellar: convert = { \"default\": \".caseName\" }`; remove the annotation", at: annotation.location)
            case .converter(let converter, _):
                throw GeneratorError("\(annotation.quoted) is on \(subject), which has a converter: \(converter).convert makes the value of a record without the property (from nil or the database type's zero value); remove the annotation", at: annotation.location)
            }
            do {
                return try DefaultValues.value(annotated: json, storedAs: stored)
            } catch {
                throw GeneratorError("\(annotation.quoted): \(error.problem); \(subject) is stored as \(stored.swiftName), which takes \(DefaultValues.annotationForm(stored))", at: annotation.location)
            }
        }
        // Optionals read nil for a missing value whatever their initial value; enums read their
        // convert default; with a converter the initial value is of the app's type, not the stored one.
        guard !candidate.isOptional, conversion == .none, let expression = candidate.initializerExpression else { return nil }
        let initializer = "`\(expression.trimmedDescription)`"
        let example = literalExample(stored, name: name, type: candidate.type)
        let alternatives = "write a value the generator can read (`\(example.literal)`), or keep the initial value and name the value those records read in an annotation on the line above the property: `\(example.annotation)`"
        let evaluated: InitialValue
        do {
            evaluated = try DefaultValues.evaluate(expression)
        } catch .newValueEachTime {
            throw GeneratorError("\(subject) starts as \(initializer), a new value for each new object, which cannot be what records written before the property existed read (the generated code reads the initial value for them); \(alternatives)", at: candidate.location)
        } catch .interpolation {
            throw GeneratorError("\(subject) starts as \(initializer), a string with interpolation, which the generator cannot evaluate (records written before the property existed read the initial value); \(alternatives)", at: candidate.location)
        } catch .invalid(let problem) {
            throw GeneratorError("\(subject) starts as \(initializer): \(problem)", at: candidate.location)
        } catch .other {
            throw GeneratorError("\(subject) starts as \(initializer), which the generator cannot evaluate: it reads literals, `T()` of built-in types, `Date(timeIntervalSince1970: <number>)`, `Date.distantPast`, `UUID(uuidString: \"…\")!`, not function calls, constants or arithmetic (records written before the property existed read the initial value); \(alternatives)", at: candidate.location)
        }
        do {
            return try DefaultValues.value(evaluated, storedAs: stored)
        } catch {
            throw GeneratorError("\(subject) starts as \(initializer), but \(error.problem): it is stored as \(stored.swiftName); \(alternatives)", at: candidate.location)
        }
    }

    /// A literal of a stored type and the matching `// cellar: default`, for messages.
    func literalExample(_ stored: StoredType, name: String, type: TypeName) -> (literal: String, annotation: String) {
        let (value, annotation): (String, String)
        switch stored.propertyType {
        case .bool: (value, annotation) = ("false", "false")
        case .float, .double: (value, annotation) = ("0.0", "0.0")
        case .string: (value, annotation) = ("\"\"", "\"\"")
        case .date, .dateNano: (value, annotation) = ("Date(timeIntervalSince1970: 0)", "\"2024-01-01T00:00:00Z\"")
        case .byteVector: (value, annotation) = (stored.swiftName == "Data" ? "Data()" : "[]", "[]")
        case .uuid: (value, annotation) = ("UUID(uuidString: \"00000000-0000-0000-0000-000000000000\")!", "\"00000000-0000-0000-0000-000000000000\"")
        default: (value, annotation) = ("0", "0")
        }
        return ("var \(name): \(type) = \(value)", "// cellar: default = \(annotation)")
    }

    /// A `ToMany<T>` property: a standalone relation, or a backlink (resolved later, once every
    /// entity is described, by `resolveBacklink`).
    mutating func describeRelation(_ candidate: PropertyCandidate, of entity: EntityDeclaration) throws -> RelationDescription {
        let subject = "`\(entity.qualifiedName).\(candidate.name)`"
        let annotations = candidate.annotations
        let type = candidate.type
        let location = candidate.location
        if let other = annotations.all.first(where: { !["name", "uid", "backlink"].contains($0.name) }) {
            throw GeneratorError("\(other.quoted) cannot be used on the to-many relation \(subject) (a ToMany is not stored in the object's record; it accepts uid, name and backlink); remove it", at: other.location)
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
                                   backlink: nil, uid: annotations.backlink == nil ? annotations.uid : nil, location: location)
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

/// `Author` → `author`.
private func lowercasedFirst(_ typeName: String) -> String {
    let last = typeName.split(separator: ".").last.map(String.init) ?? typeName
    return last.prefix(1).lowercased() + last.dropFirst()
}

/// The tokens of a declaration from its first one (attributes, modifiers) through `introducer`
/// (its `class`/`struct`/`var`… keyword), whose leading trivia hold its annotations.
private func headerTokens(_ decl: some SyntaxProtocol, through introducer: TokenSyntax) -> [TokenSyntax] {
    var tokens: [TokenSyntax] = []
    for token in decl.tokens(viewMode: .sourceAccurate) {
        tokens.append(token)
        if token.id == introducer.id { break }
    }
    return tokens
}

/// Finds the first place the parser could not read (an unexpected or a missing token).
private final class FirstErrorFinder: SyntaxVisitor {
    var position: AbsolutePosition?

    override func visit(_ node: UnexpectedNodesSyntax) -> SyntaxVisitorContinueKind {
        if position == nil { position = node.positionAfterSkippingLeadingTrivia }
        return .skipChildren
    }

    override func visit(_ token: TokenSyntax) -> SyntaxVisitorContinueKind {
        if position == nil && token.presence == .missing { position = token.positionAfterSkippingLeadingTrivia }
        return .skipChildren
    }
}
