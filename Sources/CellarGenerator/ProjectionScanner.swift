@_spi(CellarGenerated) @_spi(Testing) import Cellar
import SwiftParser
import SwiftSyntax

/// A projection as the sources declare it: a struct annotated `// cellar: projection = "Note"`,
/// a read-only view of some properties of the entity `Note`. It stores nothing and is not in the
/// model; the generator writes a `ProjectionBinding` that reads its fields from `Note`'s records.
public struct ProjectionDescription: Hashable, Sendable {
    /// One stored property of the projection and what it reads.
    public struct Field: Hashable, Sendable {
        /// How the field's value is read.
        public enum Source: Hashable, Sendable {
            /// The object id, as `Id`/`UInt64` or (`typed`) as `EntityId<Entity>`.
            case id(typed: Bool)
            /// The entity property, read as the entity binding reads it (conversions included).
            case property(PropertyDescription)
            /// The target id of the entity's `ToOne` property, as an `Id`.
            case toOneTargetId(PropertyDescription)
            /// `from = "address.city"`: `leaf` (read as its embedded type's binding reads it) of
            /// the object reached through `path`, the single embedded objects from the entity's
            /// property on (each with the qualified name of the type holding it).
            case embeddedPath([PathStep], leaf: PropertyDescription)
        }

        /// One single embedded object on a projection's path.
        public struct PathStep: Hashable, Sendable {
            /// The property holding the object.
            public var property: PropertyDescription
            /// The (qualified) Swift name of the entity or embedded type that has the property.
            public var owner: String
        }

        /// The projection's property name.
        public var name: String
        /// Declared optional.
        public var isOptional: Bool
        public var source: Source
        public var location: SourceLocation
    }

    /// The projection's (qualified) Swift type name.
    public var typeName: String
    /// The entity's (qualified) Swift type name.
    public var entityTypeName: String
    /// The fields in declaration order (the memberwise initializer's order).
    public var fields: [Field]
    public var location: SourceLocation
}

/// Finds projections in Swift sources: structs annotated `// cellar: projection = "Entity"`
/// (top level or nested in a type), whose stored properties name properties of the entity (by
/// their Swift name, or `// cellar: from = "name"`) and have the entity property's Swift type.
public enum ProjectionScanner {
    /// The type annotation that marks a projection.
    static let annotationName = "projection"

    /// The projections in `files` (in file order, then declaration order), checked against
    /// `entities` (from `SourceScanner.scan` of the same files).
    ///
    /// - Throws: every problem found, at the place to fix, as `SourceScanner.scan` does.
    public static func scan(files: [(path: String, contents: String)], entities: [EntityDescription]) throws -> [ProjectionDescription] {
        var projections: [ProjectionDescription] = []
        var errors: [GeneratorError] = []
        for (index, file) in files.enumerated() {
            let tree = Parser.parse(source: file.contents)
            let scanned = ScannedFile(path: file.path, index: index, converter: SourceLocationConverter(fileName: file.path, tree: tree))
            let finder = ProjectionFinder(file: scanned, entities: entities)
            finder.walk(tree)
            projections += finder.projections
            errors += finder.errors
        }
        guard !errors.isEmpty else { return projections }
        var unique: [GeneratorError] = []
        for error in errors where !unique.contains(error) { unique.append(error) }
        if unique.count == 1 { throw unique[0] }
        throw GeneratorErrors(messages: unique.map(\.description))
    }
}

/// Walks one file for annotated structs (and classes, actors and enums wrongly annotated).
private final class ProjectionFinder: SyntaxVisitor {
    let file: ScannedFile
    let entities: [EntityDescription]
    var projections: [ProjectionDescription] = []
    var errors: [GeneratorError] = []

    init(file: ScannedFile, entities: [EntityDescription]) {
        self.file = file
        self.entities = entities
        super.init(viewMode: .sourceAccurate)
    }

    override func visit(_ node: StructDeclSyntax) -> SyntaxVisitorContinueKind {
        guard let annotation = projectionAnnotation(node, through: node.structKeyword) else { return .visitChildren }
        do {
            if let projection = try describe(node, annotation: annotation) { projections.append(projection) }
        } catch let error as GeneratorError {
            errors.append(error)
        } catch {
            errors.append(GeneratorError("\(error)", at: file.location(of: node)))
        }
        return .visitChildren
    }

    override func visit(_ node: ClassDeclSyntax) -> SyntaxVisitorContinueKind {
        refuseKind(node, keyword: node.classKeyword, kind: "a class")
        return .visitChildren
    }

    override func visit(_ node: ActorDeclSyntax) -> SyntaxVisitorContinueKind {
        refuseKind(node, keyword: node.actorKeyword, kind: "an actor")
        return .visitChildren
    }

    private func refuseKind(_ node: some DeclSyntaxProtocol, keyword: TokenSyntax, kind: String) {
        guard let annotation = projectionAnnotation(node, through: keyword) else { return }
        errors.append(GeneratorError("\(annotation.quoted) is on \(kind): a projection is a struct (built with its memberwise initializer); declare it as a struct", at: annotation.location))
    }

    /// The `projection` annotation among a declaration's annotations, if any.
    private func projectionAnnotation(_ node: some SyntaxProtocol, through keyword: TokenSyntax) -> Annotation? {
        let (annotations, _) = Annotations.read(tokens(of: node, through: keyword), in: file)
        return annotations.first { $0.name == ProjectionScanner.annotationName }
    }

    /// `Outer.Name` for a type nested in `Outer` (or declared in `extension Outer`).
    private func qualifiedName(_ node: some SyntaxProtocol, name: String) -> String {
        var names = [name]
        var parent = node.parent
        while let current = parent {
            if let decl = current.as(StructDeclSyntax.self) { names.insert(decl.name.text.withoutBackticks, at: 0) }
            else if let decl = current.as(ClassDeclSyntax.self) { names.insert(decl.name.text.withoutBackticks, at: 0) }
            else if let decl = current.as(EnumDeclSyntax.self) { names.insert(decl.name.text.withoutBackticks, at: 0) }
            else if let decl = current.as(ActorDeclSyntax.self) { names.insert(decl.name.text.withoutBackticks, at: 0) }
            else if let decl = current.as(ExtensionDeclSyntax.self) { names.insert(decl.extendedType.trimmedDescription, at: 0) }
            parent = current.parent
        }
        return names.joined(separator: ".")
    }

    // MARK: Describing a projection

    /// The projection, or nil when a field has an error (each is reported).
    private func describe(_ node: StructDeclSyntax, annotation: Annotation) throws -> ProjectionDescription? {
        let name = qualifiedName(node, name: node.name.text.withoutBackticks)
        let location = file.location(of: node)
        let (annotations, annotationErrors) = Annotations.read(tokens(of: node, through: node.structKeyword), in: file)
        if let error = annotationErrors.first { throw error }
        if let other = annotations.first(where: { $0.name != ProjectionScanner.annotationName }) {
            throw GeneratorError("\(other.quoted) is on the projection `\(name)`: a projection takes only `// cellar: projection = \"Entity\"` (it is not stored, so it has no uid or name); remove the annotation", at: other.location)
        }
        guard let value = annotation.value, let entityName = stringLiteral(value), !entityName.isEmpty else {
            throw GeneratorError("\(annotation.quoted): name the entity it is a view of, as a JSON string: `// cellar: projection = \"Note\"`", at: annotation.location)
        }
        if node.genericParameterClause != nil {
            throw GeneratorError("`\(name)` is generic; a projection must be a concrete struct", at: location)
        }
        if node.modifiers.contains(where: { [.keyword(.private), .keyword(.fileprivate)].contains($0.name.tokenKind) }) {
            throw GeneratorError("`\(name)` is private: the generated code (in another file) must use it; make it internal or public", at: location)
        }
        let entity = try resolveEntity(entityName, annotation: annotation, projection: name)
        var fields: [ProjectionDescription.Field] = []
        var fieldErrors: [GeneratorError] = []
        for member in node.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            do {
                fields += try describeFields(variable, of: name, entity: entity)
            } catch let error as GeneratorError {
                fieldErrors.append(error)
            }
        }
        guard fieldErrors.isEmpty else {
            errors += fieldErrors
            return nil
        }
        return ProjectionDescription(typeName: name, entityTypeName: entity.typeName, fields: fields, location: location)
    }

    /// The entity named by `projection = "…"`: its qualified name, or its unqualified name when
    /// only one entity has it.
    private func resolveEntity(_ entityName: String, annotation: Annotation, projection: String) throws -> EntityDescription {
        // Embedded types have no box to project.
        let entities = entities.filter { !$0.isEmbedded }
        if let exact = entities.first(where: { $0.typeName == entityName }) { return exact }
        let byLastName = entities.filter { $0.typeName.split(separator: ".").last.map(String.init) == entityName }
        if byLastName.count == 1 { return byLastName[0] }
        let names = entities.map(\.typeName).sorted().joined(separator: ", ")
        throw GeneratorError("\(annotation.quoted) on `\(projection)` names \(entityName), which is not an entity in the scanned sources\(byLastName.count > 1 ? " (several entities have that name: qualify it)" : ""); the entities are: \(names)", at: annotation.location)
    }

    /// The fields of one `var`/`let` declaration (none for a static or computed property).
    private func describeFields(_ variable: VariableDeclSyntax, of projection: String, entity: EntityDescription) throws -> [ProjectionDescription.Field] {
        let (annotations, annotationErrors) = Annotations.read(tokens(of: variable, through: variable.bindingSpecifier), in: file)
        if let error = annotationErrors.first { throw error }
        let declLocation = file.location(of: variable)
        let modifiers = variable.modifiers
        let isStatic = modifiers.contains { [.keyword(.static), .keyword(.class)].contains($0.name.tokenKind) }
        let isComputed = variable.bindings.contains { binding in
            guard let accessors = binding.accessorBlock?.accessors else { return false }
            switch accessors {
            case .getter: return true
            case .accessors(let list):
                return list.contains { ![.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
            }
        }
        if isStatic || isComputed {
            if let annotation = annotations.first {
                throw GeneratorError("\(annotation.quoted) is on a \(isStatic ? "static" : "computed") property, which the projection does not read; remove the annotation", at: annotation.location)
            }
            return []
        }
        var from: String?
        var fromLocation: SourceLocation?
        for annotation in annotations {
            guard annotation.name == "from" else {
                throw GeneratorError("\(annotation.quoted): on a projection's property Cellar accepts only `// cellar: from = \"propertyName\"` (the entity property it reads, when the names differ)", at: annotation.location)
            }
            guard let value = annotation.value, let name = stringLiteral(value), !name.isEmpty else {
                throw GeneratorError("\(annotation.quoted): name the entity property as a JSON string: `// cellar: from = \"title\"`", at: annotation.location)
            }
            from = name
            fromLocation = annotation.location
        }
        let bindings = Array(variable.bindings)
        if from != nil && bindings.count > 1 {
            throw GeneratorError("`// cellar: from` is on a declaration of several properties; declare the property that reads another name on its own line", at: declLocation)
        }
        if let modifier = modifiers.first(where: { [.keyword(.private), .keyword(.fileprivate)].contains($0.name.tokenKind) }) {
            throw GeneratorError("`\(projection)`'s property is \(modifier.trimmedDescription): the generated code builds the projection with its memberwise initializer; make it internal or public", at: declLocation)
        }
        let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
        var fields: [ProjectionDescription.Field] = []
        for (index, binding) in bindings.enumerated() {
            guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else {
                throw GeneratorError("`\(binding.pattern.trimmedDescription)` declares several values in one pattern; declare each property with its own name", at: declLocation)
            }
            let fieldName = identifier.identifier.text.withoutBackticks
            let location = bindings.count == 1 ? declLocation : file.location(of: binding.pattern)
            let subject = "`\(projection).\(fieldName)`"
            if isLet && binding.initializer != nil {
                throw GeneratorError("\(subject) is a `let` with an initial value, which the memberwise initializer cannot set; make it var, or remove it from the projection", at: location)
            }
            // `var a, b: T`: the type of the next binding that has one.
            guard let typeSyntax = bindings[index...].lazy.compactMap(\.typeAnnotation).first?.type else {
                throw GeneratorError("\(subject) has no type annotation; the generator reads projection types from annotations: declare it `\(isLet ? "let" : "var") \(fieldName): Type`", at: location)
            }
            var type = TypeName(typeSyntax)
            var isOptional = false
            if case .optional(let wrapped) = type {
                type = wrapped
                isOptional = true
            }
            // A path's errors are at the `from` annotation that names it.
            let sourceLocation = from?.contains(".") == true ? fromLocation ?? location : location
            let source = try fieldSource(from ?? fieldName, type: type, isOptional: isOptional, subject: subject, entity: entity,
                                         location: sourceLocation)
            fields.append(ProjectionDescription.Field(name: fieldName, isOptional: isOptional, source: source, location: location))
        }
        return fields
    }

    /// What a field of `type` reads from the entity property `propertyName`.
    private func fieldSource(_ propertyName: String, type: TypeName, isOptional: Bool, subject: String, entity: EntityDescription,
                             location: SourceLocation) throws -> ProjectionDescription.Field.Source {
        let declared = "\(type)\(isOptional ? "?" : "")"
        if propertyName.contains(".") {
            return try pathSource(propertyName, type: type, isOptional: isOptional, subject: subject, entity: entity, location: location)
        }
        let entityName = entity.typeName
        let ownName = entityName.split(separator: ".").last.map(String.init) ?? entityName
        if let relation = entity.relations.first(where: { $0.name == propertyName }) {
            throw GeneratorError("\(subject) reads \(entityName).\(propertyName), a ToMany<\(relation.target)>: relations to many are not read by projections (they are not in the record); query them from the entity, or remove the field", at: location)
        }
        guard let property = entity.properties.first(where: { $0.name == propertyName }) else {
            let names = entity.properties.map(\.name).joined(separator: ", ")
            throw GeneratorError("\(entityName) has no property `\(propertyName)`; its properties are \(names) (annotate the field `// cellar: from = \"…\"` to read a property of another name)", at: location)
        }
        let readsWhat = "\(entityName).\(propertyName)"
        if property.isId {
            let typed = type.argument(ofGeneric: "EntityId")
            let isIdType = type == .named("Id", []) || type == .named("Cellar.Id", []) || type == .named("UInt64", [])
            let isOwnTypedId = typed.map { $0 == .named(ownName, []) || $0 == .named(entityName, []) } ?? false
            guard !isOptional, isIdType || isOwnTypedId else {
                throw GeneratorError("\(subject) is \(article(declared)) \(declared), but \(readsWhat) is the id: declare it `Id` or `EntityId<\(ownName)>` (never optional)", at: location)
            }
            return .id(typed: isOwnTypedId)
        }
        if let target = property.relationTarget {
            if type == .named("Id", []) || type == .named("Cellar.Id", []) {
                guard !isOptional else {
                    throw GeneratorError("\(subject) is an Id?, but \(readsWhat) is a ToOne<\(target)>, whose target id is 0 when it has none: declare it `Id`", at: location)
                }
                return .toOneTargetId(property)
            }
            guard !isOptional, type.description == property.swiftType else {
                throw GeneratorError("\(subject) is \(article(declared)) \(declared), but \(readsWhat) is a ToOne<\(target)>: declare it `ToOne<\(target)>` (attached, so its `target` reads the object) or `Id` (the target's id, 0 for none)", at: location)
            }
            return .property(property)
        }
        if property.isOptional && !isOptional {
            throw GeneratorError("\(subject) is \(article(declared)) \(declared), but \(readsWhat) is optional (\(property.swiftType)?): declare it `\(property.swiftType)?`", at: location)
        }
        guard type.description == property.swiftType else {
            throw GeneratorError("\(subject) is \(article(declared)) \(declared), but \(readsWhat) is \(property.isOptional ? "an optional" : article(property.swiftType)) \(property.swiftType): declare it `\(property.swiftType)\(isOptional || property.isOptional ? "?" : "")`", at: location)
        }
        return .property(property)
    }

    /// `from = "address.city"`: a property of an object embedded (as a single object, through any
    /// number of them) in the entity. The field is optional when the leaf or an object on the way
    /// is; a path through a list of embedded objects, a relation or a plain property is refused.
    private func pathSource(_ path: String, type: TypeName, isOptional: Bool, subject: String, entity: EntityDescription,
                            location: SourceLocation) throws -> ProjectionDescription.Field.Source {
        let declared = "\(type)\(isOptional ? "?" : "")"
        let names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard names.count >= 2, names.allSatisfy({ !$0.isEmpty }) else {
            throw GeneratorError("\(subject) reads \"\(path)\", which is not a path: write the properties separated by single dots, e.g. `// cellar: from = \"address.city\"`", at: location)
        }
        var owner = entity
        var steps: [ProjectionDescription.Field.PathStep] = []
        var walked = entity.typeName
        for name in names.dropLast() {
            if owner.relations.contains(where: { $0.name == name }) || owner.properties.contains(where: { $0.name == name && $0.relationTarget != nil }) {
                throw GeneratorError("\(subject) reads \"\(path)\", but \(walked).\(name) is a relation: a projection reads one record, not the objects it relates to; project the target entity instead", at: location)
            }
            guard let property = owner.properties.first(where: { $0.name == name }) else {
                let names = owner.properties.map(\.name).joined(separator: ", ")
                throw GeneratorError("\(subject) reads \"\(path)\", but \(owner.typeName) has no property `\(name)`; its properties are \(names)", at: location)
            }
            if property.isEmbeddedList {
                throw GeneratorError("\(subject) reads \"\(path)\", but \(walked).\(name) is a list of embedded \(property.embeddedType!) objects, which has no single \(names.last!): a path goes through single embedded objects only; declare the field `[\(property.embeddedType!)]` reading \"\(names.prefix { $0 != name }.joined(separator: "."))\(walked == entity.typeName ? "" : ".")\(name)\" instead", at: location)
            }
            guard property.isEmbeddedObject, let next = entities.first(where: { $0.isEmbedded && $0.typeName == property.embeddedType }) else {
                throw GeneratorError("\(subject) reads \"\(path)\", but \(walked).\(name) is \(article(property.swiftType)) \(property.swiftType), not an embedded object: a path goes through properties holding embedded objects (`// cellar: embedded` types)", at: location)
            }
            steps.append(.init(property: property, owner: owner.typeName))
            owner = next
            walked += ".\(name)"
        }
        let leafName = names.last!
        guard let leaf = owner.properties.first(where: { $0.name == leafName }) else {
            let names = owner.properties.map(\.name).joined(separator: ", ")
            throw GeneratorError("\(subject) reads \"\(path)\", but the embedded type \(owner.typeName) has no property `\(leafName)`; its properties are \(names)", at: location)
        }
        let optionalOnTheWay = steps.first { $0.property.isOptional }
        let mustBeOptional = leaf.isOptional || optionalOnTheWay != nil
        if mustBeOptional && !isOptional {
            let why = leaf.isOptional
                ? "\(owner.typeName).\(leafName) is optional (\(leaf.swiftType)?)"
                : "\(optionalOnTheWay!.owner).\(optionalOnTheWay!.property.name) is optional, so there may be no \(owner.typeName) to read"
            throw GeneratorError("\(subject) is \(article(declared)) \(declared), but \(why): declare it `\(leaf.swiftType)?`", at: location)
        }
        guard type.description == leaf.swiftType else {
            throw GeneratorError("\(subject) is \(article(declared)) \(declared), but \(walked).\(leafName) is \(leaf.isOptional ? "an optional" : article(leaf.swiftType)) \(leaf.swiftType): declare it `\(leaf.swiftType)\(isOptional || mustBeOptional ? "?" : "")`", at: location)
        }
        return .embeddedPath(steps, leaf: leaf)
    }

    /// "a" or "an" before a type name.
    private func article(_ typeName: String) -> String {
        guard let first = typeName.first?.lowercased().first else { return "a" }
        return "aeiou".contains(first) ? "an" : "a"
    }

    /// The string of a JSON string value (`"Note"` → `Note`).
    private func stringLiteral(_ value: String) -> String? {
        guard case .string(let text)? = try? JSONParser.parse(Array(value.utf8), source: "the value") else { return nil }
        return text
    }

    /// A declaration's tokens from its first one through `keyword`, whose leading trivia hold its
    /// annotations.
    private func tokens(of decl: some SyntaxProtocol, through keyword: TokenSyntax) -> [TokenSyntax] {
        var tokens: [TokenSyntax] = []
        for token in decl.tokens(viewMode: .sourceAccurate) {
            tokens.append(token)
            if token.id == keyword.id { break }
        }
        return tokens
    }
}
