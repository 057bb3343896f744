import Cellar
import SwiftSyntax

/// Describing one property: the id, scalars, collections, Flex values, embedded objects and default values.
extension Scan {
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
        if let target = candidate.type.argument(ofGeneric: "ToMany") {
            throw GeneratorError("\(subject) is a ToMany<\(target)>, but \(own) is an embedded type: an embedded object holds to-one relations (ToOne) only; keep the ToMany in the entity that owns the \(own)", at: candidate.location)
        }
        if candidate.type.argument(ofGeneric: "ToOne") != nil, let onDelete = annotations.onDelete {
            throw GeneratorError("\(onDelete.quoted) is on \(subject), a ToOne inside the embedded type \(own): a relation inside an embedded object has no delete rule (its link goes with its owner, and reads as no target once the target is removed); remove it", at: onDelete.location)
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
            if let other = annotations.all.first(where: { !["name", "uid", "onDelete"].contains($0.name) }) {
                throw GeneratorError("\(other.quoted) cannot be used on the relation \(subject) (a ToOne is stored as the target's id, always indexed; it accepts uid, name and onDelete); remove it", at: other.location)
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
            property.deleteRule = annotations.deleteRule
            return property
        }
        if let onDelete = annotations.onDelete {
            throw GeneratorError("\(onDelete.quoted) is on \(subject), a \(type): a delete rule is for a relation (a ToOne, a ToMany or a backlink); remove it", at: onDelete.location)
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
            var described = try describeCollection(candidate, collection, subject: subject, entity: entity, into: property)
            if let hnsw = annotations.hnsw {
                guard described.propertyType == .floatVector else {
                    throw GeneratorError("\(hnsw.quoted) is on \(subject), a \(type): an HNSW index is on a [Float] (or [Float]?) property of vectors", at: hnsw.location)
                }
                guard !entity.isEmbedded else {
                    throw GeneratorError("\(hnsw.quoted) is on \(subject), in the embedded type \(entity.qualifiedName): vector indexes are on an entity's own [Float] properties; remove the annotation", at: hnsw.location)
                }
                described.flags.insert(.indexed)
                described.index = .hnsw
                described.hnswParams = annotations.hnswParams
            }
            return described
        } else if case .named(let typeName, let arguments) = type, arguments.isEmpty, let info = resolveEnum(typeName, scope: entity.scope) {
            let example = info.cases.contains("unknown") ? ".unknown" : info.cases.first.map { ".\($0)" } ?? ".caseName"
            throw GeneratorError("\(subject) is the enum \(info.qualifiedName): store its raw value with `// cellar: convert = { \"default\": \"\(example)\" }` (the default is read when the stored value is missing or unknown)", at: location)
        } else if case .named(let typeName, let arguments) = type, arguments.isEmpty, let target = resolveEntity(typeName, scope: entity.scope) {
            throw GeneratorError("\(subject) is the entity \(target.qualifiedName), which cannot be stored inside another object: use a relation, `var \(candidate.name): ToOne<\(typeName)> = nil`", at: location)
        } else {
            throw GeneratorError("\(subject) is a \(type), which cannot be stored: use a relation (a new entity for the elements), or a `// cellar: convert` to a built-in type such as a JSON String (built-in types: \(TypeMapping.builtInNames))", at: location)
        }

        if let hnsw = annotations.hnsw {
            throw GeneratorError("\(hnsw.quoted) is on \(subject), which is stored as \(stored.swiftName): an HNSW index is on a [Float] (or [Float]?) property of vectors", at: hnsw.location)
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
        if stored.propertyType == .geoPoint {
            if let unique = annotations.unique ?? annotations.primaryKey {
                throw GeneratorError("\(unique.quoted) is on \(subject), a GeoPoint: its index finds points within shapes and cannot check uniqueness; remove the annotation", at: unique.location)
            }
            if let index = annotations.index, let kind = annotations.indexKind, kind != .geo, !annotations.indexKindIsDefault {
                throw GeneratorError("\(index.quoted) is on \(subject), a GeoPoint: its index is a geo index; write `// cellar: index = \"geo\"` (or `// cellar: index`)", at: index.location)
            }
        } else if let index = annotations.index, annotations.indexKind == .geo {
            throw GeneratorError("\(index.quoted) is on \(subject), which is stored as \(stored.swiftName): a geo index is for GeoPoint properties; use `// cellar: index` for a value index", at: index.location)
        }
        if let index = annotations.index, annotations.indexKind == .fullText {
            guard stored.propertyType == .string, property.conversion == .none else {
                throw GeneratorError("\(index.quoted) is on \(subject), which is stored as \(stored.swiftName): a full-text index is for String properties (their words are indexed); use `// cellar: index` for a value index", at: index.location)
            }
            if let other = annotations.unique ?? annotations.primaryKey {
                throw GeneratorError("\(index.quoted) and \(other.quoted) are both on \(subject): a full-text index holds words, not whole values, so it cannot check uniqueness; remove one of them", at: other.location)
            }
            guard !entity.isEmbedded else {
                throw GeneratorError("\(index.quoted) is on \(subject), in the embedded type \(entity.qualifiedName): full-text indexes are on an entity's own String properties (`matches` still searches an embedded object's text, by reading it); remove the annotation", at: index.location)
            }
        }
        if let index = annotations.index, let kind = annotations.indexKind, kind != .value, kind != .fullText, kind != .geo, stored.propertyType != .string {
            throw GeneratorError("\(index.quoted) is on \(subject), which is stored as \(stored.swiftName): hash indexes are for String properties; use `// cellar: index` (a value index)", at: index.location)
        }
        // As in ObjectBox, a String's index is a hash index unless `index = "value"` says otherwise.
        // In an embedded type it is a value index (values such as a zip code or a SKU are short,
        // and the index then orders them); `index = "hash"` asks for a hash index.
        let defaultKind: PropertyDescription.IndexKind = stored.propertyType == .geoPoint ? .geo
            : stored.propertyType == .string && !entity.isEmbedded ? .hash : .value
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
        do {
            property.defaultValue = try defaultValue(of: candidate, stored: stored, conversion: property.conversion, subject: subject)
        } catch let unreadable as UnreadableInitialValue {
            property.initialValueProblem = unreadable.problem
        }
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
            guard kind != .fullText else {
                throw GeneratorError("\(index.quoted) is on \(subject), \(what): a full-text index is for a String property (its words are indexed); use `// cellar: index` for an index of the elements", at: index.location)
            }
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
    /// initial value of a non-optional property stored as it is; nil for the zero value. Throws
    /// `UnreadableInitialValue` for an initial value that is valid Swift but cannot be that value
    /// (`Date()`, a function call): whether that matters is the model update's to say.
    /// Throws `GeneratorError` for an annotation or a literal that is wrong whatever the model.
    func defaultValue(of candidate: PropertyCandidate, stored: StoredType, conversion: PropertyDescription.Conversion,
                      subject: String) throws -> DefaultValue? {
        let name = candidate.name
        if stored.propertyType == .geoPoint {
            // A record without the point reads (0, 0) for a non-optional GeoPoint, whatever its
            // initial value (often a computed one): there is no default to evaluate or annotate.
            if let annotation = candidate.annotations.defaultAnnotation {
                throw GeneratorError("\(annotation.quoted) is on \(subject), a GeoPoint: a record without the point reads latitude 0, longitude 0 (nil when optional); remove the annotation", at: annotation.location)
            }
            return nil
        }
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
            throw UnreadableInitialValue(problem: GeneratorError("\(subject) starts as \(initializer), a new value for each new object, which cannot be what records written before the property existed read (the generated code reads the initial value for them); \(alternatives)", at: candidate.location))
        } catch .interpolation {
            throw UnreadableInitialValue(problem: GeneratorError("\(subject) starts as \(initializer), a string with interpolation, which the generator cannot evaluate (records written before the property existed read the initial value); \(alternatives)", at: candidate.location))
        } catch .invalid(let problem) {
            throw GeneratorError("\(subject) starts as \(initializer): \(problem)", at: candidate.location)
        } catch .other {
            throw UnreadableInitialValue(problem: GeneratorError("\(subject) starts as \(initializer), which the generator cannot evaluate: it reads literals, `T()` of built-in types, `Date(timeIntervalSince1970: <number>)`, `Date.distantPast`, `UUID(uuidString: \"…\")!`, `Decimal(string: \"…\")!`, not function calls, constants or arithmetic (records written before the property existed read the initial value); \(alternatives)", at: candidate.location))
        }
        do {
            return try DefaultValues.value(evaluated, storedAs: stored)
        } catch {
            throw GeneratorError("\(subject) starts as \(initializer), but \(error.problem): it is stored as \(stored.swiftName); \(alternatives)", at: candidate.location)
        }
    }

    /// An initial value that cannot be what records written before the property existed read.
    struct UnreadableInitialValue: Error {
        var problem: GeneratorError
    }

    /// A literal of a stored type and the matching `// cellar: default`, for messages.
    func literalExample(_ stored: StoredType, name: String, type: TypeName) -> (literal: String, annotation: String) {
        let (value, annotation): (String, String)
        switch stored.propertyType.known {
        case .bool: (value, annotation) = ("false", "false")
        case .float, .double: (value, annotation) = ("0.0", "0.0")
        case .string: (value, annotation) = ("\"\"", "\"\"")
        case .date, .dateNano: (value, annotation) = ("Date(timeIntervalSince1970: 0)", "\"2024-01-01T00:00:00Z\"")
        case .byteVector: (value, annotation) = (stored.swiftName == "Data" ? "Data()" : "[]", "[]")
        case .uuid: (value, annotation) = ("UUID(uuidString: \"00000000-0000-0000-0000-000000000000\")!", "\"00000000-0000-0000-0000-000000000000\"")
        case .decimal: (value, annotation) = ("Decimal(string: \"0.00\")!", "0.00")
        case .byte, .short, .char, .int, .long, .relation, .flex, .geoPoint, .embedded, .embeddedList, .collection, nil:
            (value, annotation) = ("0", "0")
        }
        return ("var \(name): \(type) = \(value)", "// cellar: default = \(annotation)")
    }

    /// A `ToMany<T>` property: a standalone relation, or a backlink (resolved later, once every
    /// entity is described, by `resolveBacklink`).
}
