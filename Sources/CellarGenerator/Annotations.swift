@_spi(CellarGenerated) @_spi(Testing) import Cellar
import SwiftSyntax

/// One annotation: a line comment `// cellar: name` or `// cellar: name = value` (the prefix
/// `objectbox:` works the same) in the leading trivia of a declaration.
struct Annotation: Hashable {
    /// `index`, `convert`, `date-nano`, …
    var name: String
    /// The text after `=`, trimmed; nil for a bare annotation.
    var value: String?
    /// The comment as written (`// objectbox: index = "hash"`), for messages.
    var text: String
    /// Written `// objectbox: …` rather than `// cellar: …`.
    var isObjectBoxSpelling: Bool
    /// Where the comment starts.
    var location: SourceLocation

    /// `` `// cellar: index` `` for messages.
    var quoted: String { "`\(text)`" }
}

/// The annotations accepted on types and on properties, and how their values are read.
enum Annotations {
    static let typeNames: Set<String> = ["entity", "embedded", "asymmetric", "uid", "name"]
    static let propertyNames: Set<String> = ["uid", "name", "id", "transient", "index", "unique", "convert", "backlink", "date-nano", "default", "primaryKey", "hnsw", "hnswIndex", "onDelete"]

    static let acceptedOnTypes = #"entity, embedded, asymmetric, uid, uid = N, name = "…", index = ["a", "b", …], unique = ["a", "b", …]"#
    static let acceptedOnProperties = #"uid, uid = N, name = "…", id, id = { "assignable": true }, transient, index, index = "hash" | "hash64" | "value" | "fulltext" | "geo", unique, unique = { "onConflict": "replace" }, convert = { "dbType": "…", "converter": "…", "default": "…" }, backlink, backlink = "…", date-nano, default = …, primaryKey, hnsw = { "dimensions": N, … }, onDelete = cascade | nullify | deny"#

    /// The forms of one annotation, for messages about a malformed value.
    static func forms(of name: String) -> String {
        switch name {
        case "uid": "`uid` (the generator then tells the UID to use) or `uid = N` with N a positive integer of at most 9223372036854775807"
        case "name": #"`name = "newName"` (a non-empty JSON string)"#
        case "id": #"`id` or `id = { "assignable": true }`"#
        case "index": #"`index`, `index = "hash"`, `index = "hash64"`, `index = "value"`, `index = "fulltext"` or `index = "geo"`"#
        case "unique": #"`unique` or `unique = { "onConflict": "replace" }`"#
        case "convert": #"`convert = { "default": ".unknown" }` for an enum stored by its raw value (`"dbType": "Int"` gives the raw type of an enum declared elsewhere), or `convert = { "dbType": "String", "converter": "ColorConverter" }` for a converter type"#
        case "onDelete": "`onDelete = cascade`, `onDelete = nullify` or `onDelete = deny` (on a ToOne, a ToMany or a backlink: what removing this object does to the objects it links to)"
        case "backlink": #"`backlink = "author"` (the name of the ToOne or ToMany of the target entity that points back) or `backlink` (when the target has a single one pointing at this entity)"#
        case "default": #"`// cellar: default = …` with a JSON value of the property's stored type: `default = 3`, `default = 1.5`, `default = true`, `default = "text"`, for a Date an ISO 8601 string (`default = "2024-01-01T00:00:00Z"`) or seconds since 1970 (`default = 1704067200`), for a UUID `default = "00000000-0000-0000-0000-000000000000"`, for Data or [UInt8] `default = []` or `default = [1, 2]`"#
        default: "`\(name)` without a value"
        }
    }

    /// The annotations in the leading trivia of `tokens` (a declaration's tokens from its first
    /// attribute up to its keyword, so comments between attributes and the keyword count too).
    /// Comments that are not annotations are ignored; a malformed annotation line is an error.
    static func read(_ tokens: some Sequence<TokenSyntax>, in file: ScannedFile) -> (annotations: [Annotation], errors: [GeneratorError]) {
        var annotations: [Annotation] = []
        var errors: [GeneratorError] = []
        for token in tokens {
            var position = token.position
            for piece in token.leadingTrivia {
                defer { position += piece.sourceLength }
                guard case .lineComment(let text) = piece else { continue }
                do {
                    if let annotation = try parse(comment: text, at: file.location(position)) {
                        annotations.append(annotation)
                    }
                } catch let error as GeneratorError {
                    errors.append(error)
                } catch {
                    errors.append(GeneratorError("\(error)", at: file.location(position)))
                }
            }
        }
        return (annotations, errors)
    }

    /// The annotations in the trailing trivia of `token` (`var x = 0 // cellar: index`), which
    /// are not read: the scanner points them out instead of ignoring them.
    static func trailing(_ token: TokenSyntax, in file: ScannedFile) -> [Annotation] {
        var result: [Annotation] = []
        var position = token.endPositionBeforeTrailingTrivia
        for piece in token.trailingTrivia {
            defer { position += piece.sourceLength }
            guard case .lineComment(let text) = piece else { continue }
            if let annotation = try? parse(comment: text, at: file.location(position)) { result.append(annotation) }
        }
        return result
    }

    /// Parses one `//` comment: nil when it is not an annotation (no `cellar:`/`objectbox:`
    /// prefix), else its name and value; throws for an annotation line that is malformed.
    static func parse(comment: String, at location: SourceLocation) throws -> Annotation? {
        guard comment.hasPrefix("//") else { return nil }
        let body = comment.dropFirst(2).drop { $0 == " " || $0 == "\t" }
        var rest: Substring
        if body.hasPrefix("cellar:") {
            rest = body.dropFirst("cellar:".count)
        } else if body.hasPrefix("objectbox:") {
            rest = body.dropFirst("objectbox:".count)
        } else {
            return nil
        }
        let text = comment.trimmingTrailingWhitespace
        rest = rest.drop { $0 == " " || $0 == "\t" }
        let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
        guard !name.isEmpty else {
            throw GeneratorError("`\(text)` names no annotation; write one annotation per line, e.g. `// cellar: index`. On types Cellar accepts: \(acceptedOnTypes); on properties: \(acceptedOnProperties)", at: location)
        }
        rest = rest.dropFirst(name.count).drop { $0 == " " || $0 == "\t" }
        var value: String?
        if !rest.isEmpty {
            // ObjectBox spells its HNSW annotation with a colon: `// objectbox: hnswIndex: {…}`.
            let colonAllowed = name == "hnswIndex" || name == "hnsw"
            guard rest.first == "=" || (colonAllowed && rest.first == ":") else {
                throw GeneratorError("`\(text)`: expected `=` or the end of the line after `\(name)`; write one annotation per line, as \(forms(of: String(name)))", at: location)
            }
            let trimmed = String(rest.dropFirst()).trimmingWhitespace
            guard !trimmed.isEmpty else {
                throw GeneratorError("`\(text)`: the value after `=` is missing; write \(forms(of: String(name)))", at: location)
            }
            value = trimmed
        }
        return Annotation(name: String(name), value: value, text: text, isObjectBoxSpelling: body.hasPrefix("objectbox:"),
                          location: location)
    }
}

/// The annotations of an entity type, understood.
struct TypeAnnotations {
    var entity: Annotation?
    /// `// cellar: embedded`: the type is stored inside its owners' records.
    var embedded: Annotation?
    /// `// cellar: asymmetric`: insert-only objects that sync pushes, then drops locally.
    var asymmetric: Annotation?
    /// nil: no `uid`; `.some(nil)`: `uid` without a value.
    var uid: UInt64??
    var uidAnnotation: Annotation?
    var name: String?
    /// `index = ["a", "b"]` and `unique = ["a", "b"]`: indexes over several properties, each
    /// naming its properties (Swift names) in key order. A type may have several.
    var indexes: [(properties: [String], unique: Bool, annotation: Annotation)] = []
    var all: [Annotation] = []

    /// Reads the annotations of a class or struct; throws for one that does not belong on a type
    /// or has a malformed value.
    init(_ annotations: [Annotation]) throws {
        all = annotations
        var seen: Set<String> = []
        for annotation in annotations {
            if annotation.name == "index" || annotation.name == "unique" {
                indexes.append((try propertyList(annotation), annotation.name == "unique", annotation))
                continue
            }
            try checkOnce(annotation, &seen)
            switch annotation.name {
            case "entity":
                try noValue(annotation)
                entity = annotation
            case "embedded":
                try noValue(annotation)
                embedded = annotation
            case "asymmetric":
                try noValue(annotation)
                asymmetric = annotation
            case "uid":
                uid = try uidValue(annotation)
                uidAnnotation = annotation
            case "name":
                name = try nameValue(annotation)
            default:
                if Annotations.propertyNames.contains(annotation.name) {
                    throw GeneratorError("\(annotation.quoted) is a property annotation and cannot be used on a type; on a class or struct Cellar accepts: \(Annotations.acceptedOnTypes)", at: annotation.location)
                }
                throw unknown(annotation, onType: true)
            }
        }
    }
}

/// The annotations of a stored property, understood.
struct PropertyAnnotations {
    /// `// cellar: convert = { … }`, read.
    struct Convert: Hashable {
        var dbType: String?
        var converter: String?
        var defaultCase: String?
    }

    var all: [Annotation] = []
    var uid: UInt64??
    var uidAnnotation: Annotation?
    var name: String?
    var id: Annotation?
    var idAssignable = false
    var transient: Annotation?
    var index: Annotation?
    var indexKind: PropertyDescription.IndexKind?
    /// `index` was given without a kind.
    var indexKindIsDefault = false
    var unique: Annotation?
    var uniqueOnConflictReplace = false
    var convert: Annotation?
    var convertSpec: Convert?
    var backlink: Annotation?
    /// `backlink = "name"`: the name of the `ToOne` or `ToMany` of the target that it is the other
    /// side of; nil for `backlink` without a value (the target's only relation to the owner).
    var backlinkName: String?
    var dateNano: Annotation?
    /// `// cellar: default = …`: the value old records read, as JSON (checked against the stored
    /// type by the scanner, which knows it).
    var defaultAnnotation: Annotation?
    /// `// cellar: primaryKey`: the property identifies the object for look-ups and upserts.
    var primaryKey: Annotation?
    /// `// cellar: onDelete = cascade | nullify | deny` on a relation.
    var onDelete: Annotation?
    var deleteRule: DeleteRule?
    /// `// cellar: hnsw = {…}` (or ObjectBox's `// objectbox: hnswIndex: {…}`): an HNSW vector
    /// index with these parameters.
    var hnsw: Annotation?
    var hnswParams: JSONValue?
    var defaultValue: JSONValue?

    /// No annotations.
    init() {}

    /// Reads the annotations of a property; throws for one that does not belong on a property or
    /// has a malformed value.
    init(_ annotations: [Annotation]) throws {
        all = annotations
        var seen: Set<String> = []
        for annotation in annotations {
            try checkOnce(annotation, &seen)
            switch annotation.name {
            case "uid":
                uid = try uidValue(annotation)
                uidAnnotation = annotation
            case "name":
                name = try nameValue(annotation)
            case "id":
                id = annotation
                if let value = annotation.value {
                    let members = try objectValue(annotation, value, allowed: ["assignable"])
                    for (key, member) in members {
                        guard key == "assignable", case .bool(let flag) = member else {
                            throw malformed(annotation, "\"assignable\" must be true or false")
                        }
                        idAssignable = flag
                    }
                }
            case "transient":
                try noValue(annotation)
                transient = annotation
            case "index":
                index = annotation
                if let value = annotation.value {
                    switch try stringValue(annotation, value) {
                    case "value": indexKind = .value
                    case "hash": indexKind = .hash
                    case "hash64": indexKind = .hash64
                    case "fulltext": indexKind = .fullText
                    case "geo": indexKind = .geo
                    default: throw malformed(annotation, "the index kind must be \"value\", \"hash\", \"hash64\", \"fulltext\" or \"geo\"")
                    }
                } else {
                    // No kind given: the scanner picks ObjectBox's default for the type (hash
                    // for String, value otherwise).
                    indexKind = .value
                    indexKindIsDefault = true
                }
            case "unique":
                unique = annotation
                if let value = annotation.value {
                    let members = try objectValue(annotation, value, allowed: ["onConflict"])
                    for (_, member) in members {
                        guard case .string(let strategy) = member, strategy == "replace" || strategy == "fail" else {
                            throw malformed(annotation, "\"onConflict\" must be \"replace\" (or \"fail\", the default)")
                        }
                        uniqueOnConflictReplace = strategy == "replace"
                    }
                }
            case "convert":
                convert = annotation
                var spec = Convert()
                if let value = annotation.value {
                    let members = try objectValue(annotation, value, allowed: ["dbType", "converter", "default"])
                    for (key, member) in members {
                        guard case .string(let text) = member, !text.trimmingWhitespace.isEmpty else {
                            throw malformed(annotation, "\"\(key)\" must be a non-empty string")
                        }
                        let trimmed = text.trimmingWhitespace
                        switch key {
                        case "dbType": spec.dbType = trimmed
                        case "converter":
                            guard trimmed.isTypeName else {
                                throw malformed(annotation, "\"converter\" must name a type, like \"ColorConverter\"; \"\(text)\" is not a type name")
                            }
                            spec.converter = trimmed
                        default:
                            guard trimmed.isDefaultCase else {
                                throw malformed(annotation, "\"default\" must name an enum case with a leading dot, like \".unknown\"; \"\(text)\" does not")
                            }
                            spec.defaultCase = trimmed
                        }
                    }
                }
                convertSpec = spec
            case "backlink":
                if let value = annotation.value {
                    let name = try stringValue(annotation, value)
                    guard !name.trimmingWhitespace.isEmpty, name == name.trimmingWhitespace else {
                        throw malformed(annotation, "the name must be non-empty, without spaces around it")
                    }
                    backlinkName = name
                }
                backlink = annotation
            case "date-nano":
                try noValue(annotation)
                dateNano = annotation
            case "hnsw", "hnswIndex":
                guard let value = annotation.value else {
                    throw malformed(annotation, "the HNSW parameters are missing; write `hnsw = { \"dimensions\": 384 }` (with any of \"neighborsPerNode\", \"indexingSearchCount\", \"distanceType\", \"reparationBacklinkProbability\", \"vectorCacheHintSizeKB\", \"flags\")")
                }
                let parameters = try json(annotation, value)
                do {
                    _ = try HNSWParameters(json: parameters)
                } catch let error as CellarError {
                    throw malformed(annotation, error.message)
                }
                hnsw = annotation
                hnswParams = parameters
            case "onDelete":
                guard let value = annotation.value else { throw malformed(annotation, "it needs a rule") }
                let word = value.hasPrefix("\"") ? try stringValue(annotation, value) : value.trimmingWhitespace
                guard let rule = DeleteRule(rawValue: word) else { throw malformed(annotation, "the rule must be cascade, nullify or deny") }
                onDelete = annotation
                deleteRule = rule
            case "primaryKey":
                if annotation.isObjectBoxSpelling {
                    throw GeneratorError("\(annotation.quoted): `primaryKey` is a Cellar annotation (ObjectBox has no equivalent); write it `// cellar: primaryKey`", at: annotation.location)
                }
                try noValue(annotation)
                primaryKey = annotation
            case "default":
                // ObjectBox Swift has no such annotation: only Cellar's spelling.
                if annotation.isObjectBoxSpelling {
                    throw GeneratorError("\(annotation.quoted): `default` is a Cellar annotation (ObjectBox has no equivalent); write it `// cellar: default = …`", at: annotation.location)
                }
                guard let value = annotation.value else { throw malformed(annotation, "the value is missing") }
                defaultValue = try json(annotation, value)
                defaultAnnotation = annotation
            default:
                if Annotations.typeNames.contains(annotation.name) {
                    throw GeneratorError("\(annotation.quoted) belongs on a class or struct, not on a property; on a property Cellar accepts: \(Annotations.acceptedOnProperties)", at: annotation.location)
                }
                throw unknown(annotation, onType: false)
            }
        }
    }
}

// MARK: - Reading values

private func unknown(_ annotation: Annotation, onType: Bool) -> GeneratorError {
    GeneratorError("\(annotation.quoted): `\(annotation.name)` is not an annotation Cellar knows. On \(onType ? "a class or struct" : "a property") it accepts: \(onType ? Annotations.acceptedOnTypes : Annotations.acceptedOnProperties)", at: annotation.location)
}

private func malformed(_ annotation: Annotation, _ problem: String) -> GeneratorError {
    GeneratorError("\(annotation.quoted): \(problem); write \(Annotations.forms(of: annotation.name))", at: annotation.location)
}

/// The property names of `index = ["a", "b"]` on a type: a JSON array of at least two strings.
private func propertyList(_ annotation: Annotation) throws -> [String] {
    let form = #"on a type, `\#(annotation.name)` takes the properties of an index over several, two or more in key order: `\#(annotation.name) = ["lastName", "firstName"]` (to index one property, annotate the property itself)"#
    guard let value = annotation.value, case .array(let elements) = try json(annotation, value) else {
        throw GeneratorError("\(annotation.quoted): \(form)", at: annotation.location)
    }
    let names = elements.compactMap { element -> String? in
        if case .string(let name) = element { return name }
        return nil
    }
    guard names.count == elements.count, names.count >= 2 else {
        throw GeneratorError("\(annotation.quoted): \(form)", at: annotation.location)
    }
    return names
}

private func checkOnce(_ annotation: Annotation, _ seen: inout Set<String>) throws {
    guard seen.insert(annotation.name).inserted else {
        throw GeneratorError("\(annotation.quoted): `\(annotation.name)` is given twice for the same declaration; keep one", at: annotation.location)
    }
}

private func noValue(_ annotation: Annotation) throws {
    if annotation.value != nil { throw malformed(annotation, "`\(annotation.name)` takes no value") }
}

private func uidValue(_ annotation: Annotation) throws -> UInt64? {
    guard let value = annotation.value else { return nil }
    guard value.allSatisfy(\.isASCIIDigit), let number = UInt64(value), number > 0, number <= UInt64(Int64.max) else {
        throw malformed(annotation, "\(value) is not a UID")
    }
    return number
}

private func nameValue(_ annotation: Annotation) throws -> String {
    guard let value = annotation.value else { throw malformed(annotation, "the new name is missing") }
    let name = try stringValue(annotation, value)
    guard !name.trimmingWhitespace.isEmpty, name == name.trimmingWhitespace else {
        throw malformed(annotation, "the name must be non-empty, without spaces around it")
    }
    return name
}

private func json(_ annotation: Annotation, _ value: String) throws -> JSONValue {
    do {
        return try JSONParser.parse(Array(value.utf8), source: "the value")
    } catch let error as CellarError {
        var message = error.description
        if error.code == .schema { message = error.message }
        throw malformed(annotation, "the value is not valid JSON (\(message))")
    }
}

private func stringValue(_ annotation: Annotation, _ value: String) throws -> String {
    guard case .string(let text) = try json(annotation, value) else {
        throw malformed(annotation, "the value must be a JSON string in double quotes")
    }
    return text
}

private func objectValue(_ annotation: Annotation, _ value: String, allowed: [String]) throws -> [(String, JSONValue)] {
    guard case .object(let members) = try json(annotation, value) else {
        throw malformed(annotation, "the value must be a JSON object")
    }
    for member in members where !allowed.contains(member.name) {
        throw malformed(annotation, "\"\(member.name)\" is not a key it knows (keys: \(allowed.map { "\"\($0)\"" }.joined(separator: ", ")))")
    }
    return members.map { ($0.name, $0.value) }
}

extension String {
    var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }

    var trimmingTrailingWhitespace: String {
        String(reversed().drop { $0.isWhitespace }.reversed())
    }

    /// A Swift identifier (ASCII letters, digits, `_`, not starting with a digit), or one in backticks.
    var isIdentifier: Bool {
        var name = Substring(self)
        if name.count > 2, name.hasPrefix("`"), name.hasSuffix("`") { name = name.dropFirst().dropLast() }
        guard let first = name.first, first.isLetter || first == "_" else { return false }
        return name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }

    /// `Name` or `Outer.Name`.
    var isTypeName: Bool {
        split(separator: ".", omittingEmptySubsequences: false).allSatisfy { String($0).isIdentifier }
    }

    /// `.caseName`.
    var isDefaultCase: Bool { hasPrefix(".") && String(dropFirst()).isIdentifier }

    /// Without surrounding backticks.
    var withoutBackticks: String {
        count > 2 && hasPrefix("`") && hasSuffix("`") ? String(dropFirst().dropLast()) : self
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
