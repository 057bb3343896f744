import Cellar
import SwiftSyntax

/// Pass one of a scan: the entities, embedded types and enums declared in the sources.
extension Scan {
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
                    if let asymmetric = typeAnnotations.asymmetric {
                        throw GeneratorError("`\(qualified)` is annotated \(embedded.quoted) and \(asymmetric.quoted): an embedded type has no objects of its own to push; mark the entity that holds it asymmetric instead", at: asymmetric.location)
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
}
