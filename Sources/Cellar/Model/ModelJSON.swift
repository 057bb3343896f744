#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The model JSON file, in ObjectBox's format (`model-<Target>.json`):
//
//     {
//       "_note1": "KEEP THIS FILE! ...",
//       "entities": [
//         {
//           "id": "1:712683617673955584",
//           "lastPropertyId": "2:5025387500910526208",
//           "name": "Author",
//           "properties": [
//             { "flags": 1, "id": "1:6336800942024279296", "name": "id", "type": 6 },
//             ...
//           ],
//           "relations": []
//         }
//       ],
//       "lastEntityId": "1:712683617673955584",
//       "lastIndexId": "0:0", "lastRelationId": "0:0", "lastSequenceId": "0:0",
//       "modelVersion": 5, "modelVersionParserMinimum": 4,
//       "retiredEntityUids": [], "retiredIndexUids": [], "retiredPropertyUids": [],
//       "retiredRelationUids": [],
//       "version": 1
//     }
//
// Reading checks the shape of the file (JSON types, required members, "ID:UID" strings, integer
// ranges, the format version), not its meaning: duplicate IDs, dangling references and the like
// are the model validation's job. Members Cellar does not interpret are kept in `extra` at their
// level and written back unchanged.

extension Model {
    /// The newest model format this version of Cellar reads: a file whose
    /// `modelVersionParserMinimum` is higher was written for a newer parser.
    static let newestReadableModelVersion = 5

    /// Reads a model from the bytes of a model JSON file (ObjectBox's format).
    ///
    /// Members Cellar does not interpret (the `_note` lines, members of newer versions) are kept
    /// in `extra` at their level, ordered by name as they are written. `retiredEntityUids`,
    /// `retiredIndexUids`, `retiredPropertyUids`, `retiredRelationUids` and an entity's
    /// `relations` may be missing (read as empty); every other member the format defines is
    /// required, except the optional `flags` (entities and properties), `indexId` and
    /// `relationTarget`.
    ///
    /// - Parameters:
    ///   - json: the file's bytes (UTF-8).
    ///   - file: how to name the file in error messages.
    /// - Throws: `CellarError.schema` naming the file, the place in it and what is wrong, e.g.
    ///   `model.json: entities[1] "Note": properties[5] "author": "indexId" must be "ID:UID", got "x"`.
    @_spi(Testing) public init(json: [UInt8], file: String = "model.json") throws {
        let root = try JSONParser.parse(json, source: file)
        guard case .object(let members) = root else {
            throw CellarError.schema("\(file): the top level must be an object, got \(describeJSON(root))")
        }
        let top = ObjectReader(path: file, members: members)

        // The format version first: a newer format may have changed everything else.
        let parserMinimum = try top.integer("modelVersionParserMinimum", as: Int.self)
        if parserMinimum > Model.newestReadableModelVersion {
            throw CellarError.schema(
                "\(file): the file is in a newer model format: \"modelVersionParserMinimum\" is \(parserMinimum), "
                + "and this version of Cellar reads formats up to \(Model.newestReadableModelVersion). "
                + "Update Cellar to use this file")
        }

        var entities: [ModelEntity] = []
        for (index, element) in try top.array("entities").enumerated() {
            entities.append(try ModelEntity(json: element, path: "\(file): entities[\(index)]"))
        }
        self.init(
            entities: entities,
            lastEntityId: try top.idUid("lastEntityId"),
            lastIndexId: try top.idUid("lastIndexId"),
            lastRelationId: try top.idUid("lastRelationId"),
            lastSequenceId: try top.idUid("lastSequenceId"),
            retiredEntityUids: try top.uids("retiredEntityUids"),
            retiredIndexUids: try top.uids("retiredIndexUids"),
            retiredPropertyUids: try top.uids("retiredPropertyUids"),
            retiredRelationUids: try top.uids("retiredRelationUids"),
            modelVersion: try top.integer("modelVersion", as: Int.self),
            modelVersionParserMinimum: parserMinimum,
            version: try top.integer("version", as: Int.self),
            extra: top.extra(known: Model.jsonMembers))
    }

    /// The model file's text as UTF-8: ObjectBox's layout (two-space indentation, each object's
    /// members sorted by name in UTF-8 byte order, entities, properties, relations and retired
    /// UIDs in their order), ending with one newline.
    ///
    /// Members in `extra` are written with the others, sorted in by name; their values are
    /// written as they are (the members of an object inside them keep their order). An `extra`
    /// member named like a member Cellar writes itself (`"id"`, `"flags"`, …) is left out, and of
    /// two `extra` members with the same name only the first is written.
    @_spi(Testing) public func jsonBytes() -> [UInt8] {
        var bytes = JSONWriter.bytes(jsonValue)
        bytes.append(0x0A)
        return bytes
    }

    /// The model file's text (see `jsonBytes()`).
    @_spi(Testing) @_spi(Tools) public func jsonString() -> String {
        String(decoding: jsonBytes(), as: UTF8.self)
    }

    /// Reads the model JSON file at `path` (see `init(json:file:)`).
    ///
    /// - Throws: `CellarError.schema` when the file cannot be read or its content is not a valid
    ///   model file; the message names the path.
    @_spi(Testing) public static func load(path: String) throws -> Model {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CellarError.schema("\(path): cannot read the model file: \(ioReason(error))")
        }
        return try Model(json: [UInt8](data), file: path)
    }

    /// Writes the model JSON file (`jsonBytes()`) to `path`, replacing the file atomically (a
    /// temporary file renamed over it), so that a crash never leaves half a file.
    ///
    /// - Throws: `CellarError.schema` naming the path and the reason when it cannot be written.
    @_spi(Testing) public func write(path: String) throws {
        do {
            try Data(jsonBytes()).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CellarError.schema("\(path): cannot write the model file: \(ioReason(error))")
        }
    }

    static let jsonMembers = [
        "entities", "lastEntityId", "lastIndexId", "lastRelationId", "lastSequenceId",
        "modelVersion", "modelVersionParserMinimum", "retiredEntityUids", "retiredIndexUids",
        "retiredPropertyUids", "retiredRelationUids", "version",
    ]

    /// The model as the JSON value of its file.
    var jsonValue: JSONValue {
        sortedObject([
            JSONMember("entities", .array(entities.map(\.jsonValue))),
            JSONMember("lastEntityId", .string(lastEntityId.description)),
            JSONMember("lastIndexId", .string(lastIndexId.description)),
            JSONMember("lastRelationId", .string(lastRelationId.description)),
            JSONMember("lastSequenceId", .string(lastSequenceId.description)),
            JSONMember("modelVersion", .number(String(modelVersion))),
            JSONMember("modelVersionParserMinimum", .number(String(modelVersionParserMinimum))),
            JSONMember("retiredEntityUids", .array(retiredEntityUids.map { .number(String($0)) })),
            JSONMember("retiredIndexUids", .array(retiredIndexUids.map { .number(String($0)) })),
            JSONMember("retiredPropertyUids", .array(retiredPropertyUids.map { .number(String($0)) })),
            JSONMember("retiredRelationUids", .array(retiredRelationUids.map { .number(String($0)) })),
            JSONMember("version", .number(String(version))),
        ], known: Model.jsonMembers, extra: extra)
    }
}

extension ModelEntity {
    static let jsonMembers = ["flags", "id", "indexes", "lastPropertyId", "name", "properties", "relations"]

    /// Reads an entity; `path` names it in messages (`model.json: entities[1]`).
    init(json: JSONValue, path: String) throws {
        let (reader, name) = try ObjectReader.named(json, path: path)
        var properties: [ModelProperty] = []
        for (index, element) in try reader.array("properties").enumerated() {
            properties.append(try ModelProperty(json: element, path: "\(reader.path): properties[\(index)]"))
        }
        var relations: [ModelRelation] = []
        for (index, element) in try reader.array("relations", required: false).enumerated() {
            relations.append(try ModelRelation(json: element, path: "\(reader.path): relations[\(index)]"))
        }
        var indexes: [ModelIndex] = []
        for (index, element) in try reader.array("indexes", required: false).enumerated() {
            indexes.append(try ModelIndex(json: element, path: "\(reader.path): indexes[\(index)]"))
        }
        self.init(
            name: name,
            id: try reader.idUid("id"),
            lastPropertyId: try reader.idUid("lastPropertyId"),
            properties: properties,
            relations: relations,
            indexes: indexes,
            flags: try reader.optionalInteger("flags", as: UInt32.self),
            extra: reader.extra(known: ModelEntity.jsonMembers))
    }

    var jsonValue: JSONValue {
        var members = [
            JSONMember("id", .string(id.description)),
            JSONMember("lastPropertyId", .string(lastPropertyId.description)),
            JSONMember("name", .string(name)),
            JSONMember("properties", .array(properties.map(\.jsonValue))),
            JSONMember("relations", .array(relations.map(\.jsonValue))),
        ]
        if let flags {
            members.append(JSONMember("flags", .number(String(flags))))
        }
        // Written only when there are some: model files without them stay as they were.
        if !indexes.isEmpty {
            members.append(JSONMember("indexes", .array(indexes.map(\.jsonValue))))
        }
        return sortedObject(members, known: ModelEntity.jsonMembers, extra: extra)
    }
}

extension ModelIndex {
    static let jsonMembers = ["id", "properties", "unique"]

    /// Reads an index over several properties: `{"id": "ID:UID", "properties": ["ID:UID", …]}`,
    /// with `"unique": true` for a unique one.
    init(json: JSONValue, path: String) throws {
        guard case .object(let members) = json else {
            throw CellarError.schema("\(path) must be an object, got \(describeJSON(json))")
        }
        let reader = ObjectReader(path: path, members: members)
        var properties: [IdUid] = []
        for (index, element) in try reader.array("properties").enumerated() {
            guard case .string(let text) = element, let id = IdUid(text) else {
                throw CellarError.schema("\(path): \"properties\"[\(index)] must be \"ID:UID\", got \(describeJSON(element))")
            }
            properties.append(id)
        }
        var unique = false
        switch reader.value("unique") {
        case nil: break
        case .bool(let value)?: unique = value
        case let other?: throw reader.fail("unique", "must be true or false, got \(describeJSON(other))")
        }
        self.init(id: try reader.idUid("id"), properties: properties, unique: unique,
                  extra: reader.extra(known: ModelIndex.jsonMembers))
    }

    var jsonValue: JSONValue {
        var members = [
            JSONMember("id", .string(id.description)),
            JSONMember("properties", .array(properties.map { .string($0.description) })),
        ]
        if unique { members.append(JSONMember("unique", .bool(true))) }
        return sortedObject(members, known: ModelIndex.jsonMembers, extra: extra)
    }
}

extension ModelProperty {
    static let jsonMembers = ["backlinkDeleteRule", "deleteRule", "embeddedType", "flags", "hnswParams", "id", "indexId", "name",
                              "relationTarget", "type"]

    /// Reads a property; `path` names it in messages.
    init(json: JSONValue, path: String) throws {
        let (reader, name) = try ObjectReader.named(json, path: path)
        self.init(
            name: name,
            id: try reader.idUid("id"),
            type: PropertyType(rawValue: try reader.integer("type", as: Int.self)),
            flags: PropertyFlags(rawValue: try reader.optionalInteger("flags", as: UInt32.self) ?? 0),
            indexId: try reader.optionalIdUid("indexId"),
            relationTarget: try reader.optionalString("relationTarget"),
            embeddedType: try reader.optionalString("embeddedType"),
            hnswParams: reader.value("hnswParams"),
            deleteRule: try reader.optionalDeleteRule("deleteRule"),
            backlinkDeleteRule: try reader.optionalDeleteRule("backlinkDeleteRule"),
            extra: reader.extra(known: ModelProperty.jsonMembers))
    }

    var jsonValue: JSONValue {
        var members = [
            JSONMember("id", .string(id.description)),
            JSONMember("name", .string(name)),
            JSONMember("type", .number(String(type.rawValue))),
        ]
        if flags.rawValue != 0 {
            members.append(JSONMember("flags", .number(String(flags.rawValue))))
        }
        if let indexId {
            members.append(JSONMember("indexId", .string(indexId.description)))
        }
        if let relationTarget {
            members.append(JSONMember("relationTarget", .string(relationTarget)))
        }
        if let embeddedType {
            members.append(JSONMember("embeddedType", .string(embeddedType)))
        }
        if let hnswParams {
            members.append(JSONMember("hnswParams", hnswParams))
        }
        members += deleteRuleMembers(deleteRule, backlinkDeleteRule)
        return sortedObject(members, known: ModelProperty.jsonMembers, extra: extra)
    }
}

extension ModelRelation {
    static let jsonMembers = ["backlinkDeleteRule", "deleteRule", "id", "name", "targetId"]

    /// Reads a relation; `path` names it in messages.
    init(json: JSONValue, path: String) throws {
        let (reader, name) = try ObjectReader.named(json, path: path)
        self.init(
            name: name,
            id: try reader.idUid("id"),
            targetId: try reader.idUid("targetId"),
            deleteRule: try reader.optionalDeleteRule("deleteRule"),
            backlinkDeleteRule: try reader.optionalDeleteRule("backlinkDeleteRule"),
            extra: reader.extra(known: ModelRelation.jsonMembers))
    }

    var jsonValue: JSONValue {
        sortedObject([
            JSONMember("id", .string(id.description)),
            JSONMember("name", .string(name)),
            JSONMember("targetId", .string(targetId.description)),
        ] + deleteRuleMembers(deleteRule, backlinkDeleteRule), known: ModelRelation.jsonMembers, extra: extra)
    }
}

/// The members of a relation's delete rules, when set.
private func deleteRuleMembers(_ rule: DeleteRule?, _ backlinkRule: DeleteRule?) -> [JSONMember] {
    [rule.map { JSONMember("deleteRule", .string($0.rawValue)) },
     backlinkRule.map { JSONMember("backlinkDeleteRule", .string($0.rawValue)) }].compactMap { $0 }
}

// MARK: - Reading

/// The members of one object of the model file, read with checks whose errors name `path`.
private struct ObjectReader {
    /// Where the object is, e.g. `model.json: entities[1] "Note"`.
    var path: String
    let members: [JSONMember]

    init(path: String, members: [JSONMember]) {
        self.path = path
        self.members = members
    }

    /// A reader on `json`, which must be an object with a string member `name`; the name is
    /// added to the path for later messages (`entities[1] "Note"`).
    static func named(_ json: JSONValue, path: String) throws -> (ObjectReader, String) {
        guard case .object(let members) = json else {
            throw CellarError.schema("\(path) must be an object, got \(describeJSON(json))")
        }
        var reader = ObjectReader(path: path, members: members)
        let name = try reader.string("name")
        reader.path += " \(jsonQuotedForMessage(name))"
        return (reader, name)
    }

    /// The member's value (names compared byte for byte, as the parser does for duplicates).
    func value(_ name: String) -> JSONValue? {
        members.first { sameName($0.name, name) }?.value
    }

    func fail(_ name: String, _ problem: String) -> CellarError {
        .schema("\(path): \"\(name)\" \(problem)")
    }

    func missing(_ name: String, _ what: String) -> CellarError {
        .schema("\(path): the member \"\(name)\" is missing (it must be \(what))")
    }

    func string(_ name: String) throws -> String {
        guard let value = value(name) else { throw missing(name, "a string") }
        return try string(name, value)
    }

    func optionalDeleteRule(_ name: String) throws -> DeleteRule? {
        guard let text = try optionalString(name) else { return nil }
        guard let rule = DeleteRule(rawValue: text) else {
            throw fail(name, "must be \"cascade\", \"nullify\" or \"deny\", got \"\(text)\"")
        }
        return rule
    }

    func optionalString(_ name: String) throws -> String? {
        guard let value = value(name) else { return nil }
        return try string(name, value)
    }

    private func string(_ name: String, _ value: JSONValue) throws -> String {
        guard case .string(let text) = value else {
            throw fail(name, "must be a string, got \(describeJSON(value))")
        }
        return text
    }

    func idUid(_ name: String) throws -> IdUid {
        guard let value = value(name) else { throw missing(name, "a string \"ID:UID\"") }
        return try idUid(name, value)
    }

    func optionalIdUid(_ name: String) throws -> IdUid? {
        guard let value = value(name) else { return nil }
        return try idUid(name, value)
    }

    private func idUid(_ name: String, _ value: JSONValue) throws -> IdUid {
        let format = "(two decimal numbers: an ID up to \(UInt32.max) and a UID up to \(UInt64.max))"
        guard case .string(let text) = value else {
            throw fail(name, "must be \"ID:UID\", got \(describeJSON(value)) \(format)")
        }
        guard let idUid = IdUid(text) else {
            throw fail(name, "must be \"ID:UID\", got \(jsonQuotedForMessage(text)) \(format)")
        }
        return idUid
    }

    func integer<T: FixedWidthInteger>(_ name: String, as type: T.Type) throws -> T {
        guard let value = value(name) else { throw missing(name, "an integer from 0 to \(T.max)") }
        return try integer(value, as: type) { fail(name, $0) }
    }

    func optionalInteger<T: FixedWidthInteger>(_ name: String, as type: T.Type) throws -> T? {
        guard let value = value(name) else { return nil }
        return try integer(value, as: type) { fail(name, $0) }
    }

    func array(_ name: String, required: Bool = true) throws -> [JSONValue] {
        guard let value = value(name) else {
            if required { throw missing(name, "an array") }
            return []
        }
        guard case .array(let elements) = value else {
            throw fail(name, "must be an array, got \(describeJSON(value))")
        }
        return elements
    }

    /// An optional array of UIDs (empty when missing).
    func uids(_ name: String) throws -> [UInt64] {
        try array(name, required: false).enumerated().map { index, element in
            try integer(element, as: UInt64.self) { problem in
                .schema("\(path): \"\(name)\"[\(index)] \(problem)")
            }
        }
    }

    /// A non-negative integer written with digits only (no sign, fraction or exponent) that fits
    /// `T`; `fail` makes the error from "must be …, got …".
    private func integer<T: FixedWidthInteger>(_ value: JSONValue, as: T.Type,
                                               fail: (String) -> CellarError) throws -> T {
        let expected = "must be an integer from 0 to \(T.max)"
        guard case .number(let text) = value else {
            throw fail("\(expected), got \(describeJSON(value))")
        }
        let digitsOnly = !text.isEmpty && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        guard digitsOnly else {
            let hint = text.hasPrefix("-") ? "negative" : "not a whole number written with digits only"
            throw fail("\(expected), got \(shortened(text)) (\(hint))")
        }
        guard let result = T(text) else {
            throw fail("\(expected), got \(shortened(text)) (too large)")
        }
        return result
    }

    /// The members not in `known`, sorted by name as they are written.
    func extra(known: [String]) -> [JSONMember] {
        members.filter { member in !known.contains { sameName(member.name, $0) } }
            .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }
}

/// Whether two member names are the same bytes (Swift's `==` on strings compares canonical
/// equivalence, under which some distinct JSON names would be equal).
private func sameName(_ a: String, _ b: String) -> Bool {
    a.utf8.elementsEqual(b.utf8)
}

/// A number's text for a message, shortened to about 40 characters.
private func shortened(_ text: String) -> String {
    text.utf8.count > 40 ? String(decoding: text.utf8.prefix(37), as: UTF8.self) + "..." : text
}

/// What a JSON value is, for "got …" in messages.
func describeJSON(_ value: JSONValue) -> String {
    switch value {
    case .null: "null"
    case .bool(let flag): flag ? "true" : "false"
    case .number(let text): "the number \(shortened(text))"
    case .string(let text): "the string \(jsonQuotedForMessage(text))"
    case .array(let elements): elements.isEmpty ? "an empty array" : "an array"
    case .object: "an object"
    }
}

// MARK: - Writing

/// An object of `members` (Cellar's) and the members of `extra` whose names are neither in
/// `known` nor taken by an earlier `extra` member, sorted by name in UTF-8 byte order.
private func sortedObject(_ members: [JSONMember], known: [String], extra: [JSONMember]) -> JSONValue {
    var all = members
    var taken = Set(known.map { Array($0.utf8) })
    for member in extra where taken.insert(Array(member.name.utf8)).inserted {
        all.append(member)
    }
    all.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    return .object(all)
}

/// A file error's reason as the system says it (`No such file or directory`).
private func ioReason(_ error: any Error) -> String {
    if let cocoa = error as? CocoaError, let posix = cocoa.userInfo["NSUnderlyingError"] as? POSIXError {
        return String(cString: strerror(posix.code.rawValue))
    }
    if let posix = error as? POSIXError {
        return String(cString: strerror(posix.code.rawValue))
    }
    return String(describing: error)
}
