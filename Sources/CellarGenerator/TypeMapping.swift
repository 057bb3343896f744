@_spi(CellarGenerated) import Cellar
import SwiftSyntax

/// A Swift type as written in the sources, understood from syntax alone (the scanner does no type
/// checking): enough to tell built-in types, optionals, `ToOne<T>`, `EntityId<T>` and enums apart.
indirect enum TypeName: Hashable, CustomStringConvertible {
    /// `Name` or `Module.Name`/`Outer.Name`, with the generic arguments of its last component
    /// (`ToOne<Author>`, `Foundation.Date`).
    case named(String, [TypeName])
    /// `[Element]`.
    case array(TypeName)
    /// `[Key: Value]`.
    case dictionary(TypeName, TypeName)
    /// `T?`, `T!` or `Optional<T>`.
    case optional(TypeName)
    /// Anything else (dictionaries, tuples, functions, `some`/`any` types, …), as written.
    case other(String)

    /// Reads a type from its syntax.
    init(_ type: TypeSyntax) {
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            let arguments = TypeName.arguments(identifier.genericArgumentClause)
            let name = identifier.name.text
            self = name == "Optional" && arguments.count == 1 ? .optional(arguments[0]) : .named(name, arguments)
        } else if let member = type.as(MemberTypeSyntax.self) {
            guard case .named(let base, let baseArguments) = TypeName(member.baseType), baseArguments.isEmpty else {
                self = .other(type.trimmedDescription)
                return
            }
            let arguments = TypeName.arguments(member.genericArgumentClause)
            let name = "\(base).\(member.name.text)"
            self = name == "Swift.Optional" && arguments.count == 1 ? .optional(arguments[0]) : .named(name, arguments)
        } else if let optional = type.as(OptionalTypeSyntax.self) {
            self = .optional(TypeName(optional.wrappedType))
        } else if let optional = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            self = .optional(TypeName(optional.wrappedType))
        } else if let array = type.as(ArrayTypeSyntax.self) {
            self = .array(TypeName(array.element))
        } else if let dictionary = type.as(DictionaryTypeSyntax.self) {
            self = .dictionary(TypeName(dictionary.key), TypeName(dictionary.value))
        } else {
            self = .other(type.trimmedDescription)
        }
    }

    /// Reads a type from an expression that names one: the callee of `Date()`, `[UInt8]()`,
    /// `ToOne<Author>()`, or the base of `Role.admin`. Nil when the expression names no type.
    init?(expression: ExprSyntax) {
        if let reference = expression.as(DeclReferenceExprSyntax.self), reference.argumentNames == nil {
            self = .named(reference.baseName.text, [])
        } else if let member = expression.as(MemberAccessExprSyntax.self), let base = member.base,
                  case .named(let baseName, let baseArguments)? = TypeName(expression: base), baseArguments.isEmpty {
            self = .named("\(baseName).\(member.declName.baseName.text)", [])
        } else if let generic = expression.as(GenericSpecializationExprSyntax.self),
                  case .named(let name, let noArguments)? = TypeName(expression: generic.expression), noArguments.isEmpty {
            let arguments = generic.genericArgumentClause.arguments.map { argument -> TypeName in
                switch argument.argument {
                case .type(let type): TypeName(type)
                default: .other(argument.argument.trimmedDescription)
                }
            }
            self = name == "Optional" && arguments.count == 1 ? .optional(arguments[0]) : .named(name, arguments)
        } else if let array = expression.as(ArrayExprSyntax.self), array.elements.count == 1,
                  let element = TypeName(expression: array.elements.first!.expression) {
            self = .array(element)
        } else if let dictionary = expression.as(DictionaryExprSyntax.self),
                  case .elements(let elements) = dictionary.content, elements.count == 1,
                  let key = TypeName(expression: elements.first!.key), let value = TypeName(expression: elements.first!.value) {
            self = .dictionary(key, value)
        } else {
            return nil
        }
    }

    private static func arguments(_ clause: GenericArgumentClauseSyntax?) -> [TypeName] {
        guard let clause else { return [] }
        return clause.arguments.map { argument in
            switch argument.argument {
            case .type(let type): TypeName(type)
            default: .other(argument.argument.trimmedDescription)
            }
        }
    }

    /// The type as Swift source (`ToOne<Author>`, `[UInt8]`, `String?`).
    var description: String {
        switch self {
        case .named(let name, let arguments):
            arguments.isEmpty ? name : "\(name)<\(arguments.map(\.description).joined(separator: ", "))>"
        case .array(let element): "[\(element)]"
        case .dictionary(let key, let value): "[\(key): \(value)]"
        case .optional(let wrapped): "\(wrapped)?"
        case .other(let text): text
        }
    }

    /// For a named type: its name without a `Swift.`, `Foundation.` or `Cellar.` module prefix,
    /// which is how the built-in types and Cellar's generic types are recognized.
    var unqualifiedName: String? {
        guard case .named(let name, _) = self else { return nil }
        for module in ["Swift.", "Foundation.", "Cellar."] where name.hasPrefix(module) {
            return String(name.dropFirst(module.count))
        }
        return name
    }

    /// The generic arguments of a named type (empty for other types).
    var genericArguments: [TypeName] {
        if case .named(_, let arguments) = self { return arguments }
        return []
    }
}

/// How a built-in Swift type is stored: its type code, the Swift type a record reads and writes
/// it as (`PropertyDescription.storedSwiftType`) and whether it is unsigned.
struct StoredType: Hashable {
    var propertyType: PropertyType
    var swiftName: String
    var isUnsigned: Bool

    /// The type flags that come with the type itself (`unsigned`).
    var flags: PropertyFlags { isUnsigned ? .unsigned : [] }
    var isInteger: Bool { [.byte, .short, .int, .long].contains(propertyType) }
    /// ObjectBox indexes neither floating-point numbers nor byte vectors.
    var isIndexable: Bool { ![.float, .double, .byteVector].contains(propertyType) }
}

/// The built-in types Cellar stores as they are (ObjectBox Swift's list, and Foundation's `UUID`
/// and `Decimal`).
enum TypeMapping {
    /// By name, without a module prefix.
    static let builtIns: [String: StoredType] = {
        var types: [String: StoredType] = [:]
        func add(_ name: String, _ type: PropertyType, unsigned: Bool = false) {
            types[name] = StoredType(propertyType: type, swiftName: name, isUnsigned: unsigned)
        }
        add("Bool", .bool)
        add("Int8", .byte)
        add("UInt8", .byte, unsigned: true)
        add("Int16", .short)
        add("UInt16", .short, unsigned: true)
        add("Int32", .int)
        add("UInt32", .int, unsigned: true)
        add("Int64", .long)
        add("Int", .long)
        add("UInt64", .long, unsigned: true)
        add("UInt", .long, unsigned: true)
        add("Float", .float)
        add("Double", .double)
        add("String", .string)
        add("Date", .date)
        add("Data", .byteVector)
        add("[UInt8]", .byteVector)
        add("UUID", .uuid)              // a Cellar extension: ObjectBox has no UUID type
        add("GeoPoint", .geoPoint)      // a Cellar extension too
        add("Decimal", .decimal)        // and so is Foundation's Decimal
        return types
    }()

    /// The built-in names for messages, in the order of that list.
    static let builtInNames = "Bool, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, Int, UInt64, UInt, Float, Double, String, Date, Data, [UInt8], UUID, GeoPoint, Decimal"

    /// The stored form of a built-in type (`Id` counts as `UInt64`), or nil for any other type.
    static func builtIn(_ type: TypeName) -> StoredType? {
        switch type {
        case .named:
            guard type.genericArguments.isEmpty || type.isByteArray, let name = type.unqualifiedName else { return nil }
            if type.isByteArray { return builtIns["[UInt8]"] }
            if name == "Id" { return builtIns["UInt64"] }
            return builtIns[name]
        case .array:
            return type.isByteArray ? builtIns["[UInt8]"] : nil
        case .optional, .dictionary, .other:
            return nil
        }
    }

    /// A list, set or map type taken apart: its kind and element type as written (`[String]`,
    /// `Array<Int>`, `Set<UUID>`, `[String: Double]`, `Dictionary<String, Date>`); nil for any other
    /// type (`[UInt8]` is a byte vector, not a list). For a map, `key` is the key type as written.
    static func collection(_ type: TypeName) -> (kind: CollectionShape.Kind, element: TypeName, key: TypeName?)? {
        if type.isByteArray { return nil }
        switch type {
        case .array(let element):
            return (.list, element, nil)
        case .dictionary(let key, let value):
            return (.map, value, key)
        case .named:
            let arguments = type.genericArguments
            switch (type.unqualifiedName, arguments.count) {
            case ("Array", 1): return (.list, arguments[0], nil)
            case ("Set", 1): return (.set, arguments[0], nil)
            case ("Dictionary", 2): return (.map, arguments[1], arguments[0])
            default: return nil
            }
        default:
            return nil
        }
    }

    /// `FlexValue` (also `Cellar.FlexValue`).
    static func isFlex(_ type: TypeName) -> Bool {
        type.unqualifiedName == "FlexValue" && type.genericArguments.isEmpty
    }

    /// The stored form of a `dbType` in `// cellar: convert` (a built-in type name, as written in
    /// the annotation: `"Int"`, `"String"`, `"[UInt8]"`, `"Array<UInt8>"`).
    static func dbType(_ text: String) -> StoredType? {
        let compact = text.filter { !$0.isWhitespace }
        if compact == "[UInt8]" || compact == "Array<UInt8>" || compact == "Swift.Array<Swift.UInt8>" || compact == "[Swift.UInt8]" {
            return builtIns["[UInt8]"]
        }
        return builtIn(.named(compact, []))
    }
}

extension TypeName {
    /// `[UInt8]` or `Array<UInt8>` (also with the `Swift.` prefix).
    var isByteArray: Bool {
        switch self {
        case .array(let element):
            return element.unqualifiedName == "UInt8" && element.genericArguments.isEmpty
        case .named:
            let arguments = genericArguments
            return unqualifiedName == "Array" && arguments.count == 1
                && arguments[0].unqualifiedName == "UInt8" && arguments[0].genericArguments.isEmpty
        default:
            return false
        }
    }

    /// The one generic argument of `Cellar`'s `name<T>` (`ToOne`, `ToMany`, `EntityId`), or nil
    /// when the type is not that generic type. A wrong number of arguments gives `.other`.
    func argument(ofGeneric name: String) -> TypeName? {
        guard unqualifiedName == name else { return nil }
        let arguments = genericArguments
        return arguments.count == 1 ? arguments[0] : .other("")
    }
}
