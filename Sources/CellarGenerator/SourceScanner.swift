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
struct EnumInfo {
    var qualifiedName: String
    /// The first type in the inheritance clause (Swift puts the raw type first), if any.
    var firstInherited: TypeName?
    var cases: [String]
}

/// A class or struct found to be an entity, before its properties are read.
struct EntityDeclaration {
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
struct PropertyCandidate {
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
struct Scan {
    var errors: [GeneratorError] = []
    var entities: [EntityDeclaration] = []
    var enums: [String: EnumInfo] = [:]
    /// The `// cellar: backlink` annotations of the described entities' `ToMany`s, by
    /// `Entity.property`: resolved once every entity is described.
    var backlinks: [String: (annotation: Annotation, name: String?)] = [:]

    mutating func report(_ message: String, at location: SourceLocation) {
        errors.append(GeneratorError(message, at: location))
    }
}


/// `Author` → `author`.
func lowercasedFirst(_ typeName: String) -> String {
    let last = typeName.split(separator: ".").last.map(String.init) ?? typeName
    return last.prefix(1).lowercased() + last.dropFirst()
}

/// The tokens of a declaration from its first one (attributes, modifiers) through `introducer`
/// (its `class`/`struct`/`var`… keyword), whose leading trivia hold its annotations.
func headerTokens(_ decl: some SyntaxProtocol, through introducer: TokenSyntax) -> [TokenSyntax] {
    var tokens: [TokenSyntax] = []
    for token in decl.tokens(viewMode: .sourceAccurate) {
        tokens.append(token)
        if token.id == introducer.id { break }
    }
    return tokens
}

/// Finds the first place the parser could not read (an unexpected or a missing token).
final class FirstErrorFinder: SyntaxVisitor {
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
