import Cellar
import SwiftSyntax

/// Types of a scan's properties: declared or inferred, and resolved to the scanned enums, entities and embedded types.
extension Scan {
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
}
