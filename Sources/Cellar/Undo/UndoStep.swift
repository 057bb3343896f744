import CellarStorage
import Foundation

/// One undoable write: for each object it changed, the values of the properties it changed
/// before and after it (the whole object when it was created or removed), and for each
/// standalone relation whose links of the object changed, the targets before and after. Kept in
/// the store as JSON (see ``UndoLog``):
///
/// ```
/// {"name": "Rename", "objects": [{"entity": "<uid>", "id": <id>, "before": {…} | null,
///   "after": {…} | null, "links": {"<relation id>": {"before": [ids], "after": [ids]}}}]}
/// ```
struct UndoStep: Equatable {
    struct Object: Equatable {
        var entityUid: UInt64
        var id: Id
        /// Nil: the object was not there (created by the step, or, for `after`, removed).
        var before: [JSONMember]?
        var after: [JSONMember]?
        /// By relation ID: the targets before and after.
        var links: [UInt32: (before: [Id], after: [Id])] = [:]

        static func == (a: Object, b: Object) -> Bool {
            guard a.entityUid == b.entityUid, a.id == b.id, a.before == b.before, a.after == b.after, a.links.count == b.links.count else { return false }
            for (relation, mine) in a.links {
                guard let theirs = b.links[relation], mine.before == theirs.before, mine.after == theirs.after else { return false }
            }
            return true
        }
    }

    var name: String
    var objects: [Object]

    /// What the write running in `context` has changed so far, compared with the state it began
    /// from (its base snapshot).
    static func capture(_ name: String, in context: TransactionContext) throws -> UndoStep {
        let store = context.store
        guard let history = context.history, let write = context.write else {
            throw CellarError.illegalArgument("an undoable write needs the store's change history (StoreOptions.changeHistory)")
        }
        let base = TransactionContext(store: store, read: try write.readBase())
        var objects: [Object] = []
        for touched in history.touchedObjects() {
            guard let schema = store.schemasById[touched.entity] else { continue }
            let entity = store.model.entities[schema.index]
            func dump(_ context: TransactionContext) throws -> [JSONMember]? {
                try context.withRecord(schema, touched.id) { bytes in
                    try bytes.map { try ObjectDump.properties(of: RecordReader($0), entity: entity, model: store.model, style: .exact) }
                }
            }
            var object = Object(entityUid: schema.id.uid, id: touched.id, before: try dump(base), after: try dump(context))
            if let before = object.before, let after = object.after {
                // Only the properties the step changed.
                let changed = Set(zip(before, after).filter { $0.0 != $0.1 }.map(\.0.name))
                object.before = before.filter { changed.contains($0.name) }
                object.after = after.filter { changed.contains($0.name) }
            }
            for relation in touched.relations.sorted() {
                let tree = StorageLayout.relationTree(relation)
                let before = try base.pairedIds(touched.id, in: tree), after = try context.pairedIds(touched.id, in: tree)
                if Set(before) != Set(after) { object.links[relation] = (before, after) }
            }
            let valuesChanged = object.before == nil ? object.after != nil : (object.after == nil || !object.before!.isEmpty)
            if valuesChanged || !object.links.isEmpty { objects.append(object) }
        }
        return UndoStep(name: name, objects: objects)
    }

    /// Undoes the step (`reverse`) or does it again, in `context`: per property, the value the
    /// step left (or, redoing, found) is replaced when the object still holds it; a property
    /// changed since keeps its newer value. An object the step created is removed; one it
    /// removed is put back with its values, unless an object is stored under its id again. Links
    /// the step added are removed and links it removed are added back, each only when it is not
    /// already so. Returns the number of properties and links kept because they changed since.
    func apply(reverse: Bool, in context: TransactionContext) throws -> Int {
        let store = context.store
        var kept = 0
        var mappings: [UInt32: ImportMapping] = [:]
        let builder = RecordBuilder(capacity: 1024)
        for object in objects {
            guard let schema = store.schemas[object.entityUid] else { continue }
            let entity = store.model.entities[schema.index]
            let (found, wanted) = reverse ? (object.after, object.before) : (object.before, object.after)
            var current = try context.withRecord(schema, object.id) { bytes in
                try bytes.map { try ObjectDump.properties(of: RecordReader($0), entity: entity, model: store.model, style: .exact) }
            }
            let isNew = current == nil
            switch (found, wanted) {
            case (nil, nil):
                continue
            case (_, nil):
                if current != nil { _ = try context.removeObject(schema, id: object.id) }
                continue
            case (nil, let values?):
                guard current == nil else { kept += 1; continue }
                current = values
            case (let left?, let values?):
                guard var members = current else { kept += values.count; continue }
                var changed = false
                for value in values {
                    guard let index = members.firstIndex(where: { $0.name == value.name }) else { continue }
                    guard members[index].value == left.first(where: { $0.name == value.name })?.value else { kept += 1; continue }
                    if members[index].value != value.value {
                        members[index].value = value.value
                        changed = true
                    }
                }
                guard changed else { continue }
                current = members
            }
            let mapping: ImportMapping
            if let known = mappings[schema.id.id] {
                mapping = known
            } else {
                mapping = try ImportMapping(file: entity, in: store.model, store: entity, in: store.model)
                mappings[schema.id.id] = mapping
            }
            try ObjectRecordEncoder.write(current!, mapping, into: builder)
            try context.putIndexed(schema, id: object.id, record: builder.finished, tree: try context.writeTree(schema), isNew: isNew)
            try context.withSequence(schema) { $0.noteAssigned(object.id) }
            context.changeLog?.note(schema, object.id)
        }
        // Links after every object is back: a link may point at an object put back above.
        for object in objects where !object.links.isEmpty {
            guard let schema = store.schemas[object.entityUid], try context.contains(schema, object.id) else {
                kept += object.links.count
                continue
            }
            for (relation, targets) in object.links.sorted(by: { $0.key < $1.key }) {
                guard let target = schema.relations.first(where: { $0.id.id == relation }).flatMap({ store.schemasById[$0.targetId.id] }) else { continue }
                let (found, wanted) = reverse ? (Set(targets.after), Set(targets.before)) : (Set(targets.before), Set(targets.after))
                let current = Set(try context.pairedIds(object.id, in: StorageLayout.relationTree(relation)))
                for gone in found.subtracting(wanted).sorted() {
                    if current.contains(gone) {
                        try context.setLink(object.id, gone, link: .relation(relation), linked: false, targetSchema: target)
                    } else {
                        kept += 1
                    }
                }
                for back in wanted.subtracting(found).sorted() {
                    if !current.contains(back), try context.contains(target, back) {
                        try context.setLink(object.id, back, link: .relation(relation), linked: true, targetSchema: target)
                    } else {
                        kept += 1
                    }
                }
            }
        }
        return kept
    }

    // MARK: Encoding

    var json: JSONValue {
        func members(_ values: [JSONMember]?) -> JSONValue { values.map { .object($0) } ?? .null }
        func ids(_ ids: [Id]) -> JSONValue { .array(ids.map { .number(String($0)) }) }
        return .object([
            JSONMember("name", .string(name)),
            JSONMember("objects", .array(objects.map { object in
                .object([
                    JSONMember("entity", .string(String(object.entityUid))),
                    JSONMember("id", .number(String(object.id))),
                    JSONMember("before", members(object.before)),
                    JSONMember("after", members(object.after)),
                    JSONMember("links", .object(object.links.sorted { $0.key < $1.key }.map {
                        JSONMember(String($0.key), .object([JSONMember("before", ids($0.value.before)), JSONMember("after", ids($0.value.after))]))
                    })),
                ])
            })),
        ])
    }

    init(name: String, objects: [Object]) {
        self.name = name
        self.objects = objects
    }

    init(json bytes: [UInt8]) throws {
        func corrupt(_ what: String) -> CellarError { .fileCorrupt("an undo step: \(what)") }
        guard case .object(let top) = try JSONParser.parse(bytes, source: "undo step"),
              case .string(let name)? = top.first(where: { $0.name == "name" })?.value,
              case .array(let list)? = top.first(where: { $0.name == "objects" })?.value else { throw corrupt("no name or objects") }
        func member(_ members: [JSONMember], _ name: String) -> JSONValue? { members.first { $0.name == name }?.value }
        func values(_ value: JSONValue?) throws -> [JSONMember]? {
            switch value {
            case .object(let members)?: return members
            case .null?: return nil
            default: throw corrupt("values that are not an object")
            }
        }
        func ids(_ value: JSONValue?) throws -> [Id] {
            guard case .array(let elements)? = value else { throw corrupt("a list of links that is not one") }
            return try elements.map {
                guard case .number(let text) = $0, let id = Id(text) else { throw corrupt("a link that is not an id") }
                return id
            }
        }
        self.name = name
        objects = try list.map { element in
            guard case .object(let fields) = element, case .string(let uidText)? = member(fields, "entity"), let uid = UInt64(uidText),
                  case .number(let idText)? = member(fields, "id"), let id = Id(idText),
                  case .object(let linkFields)? = member(fields, "links") else { throw corrupt("an object without its entity, id or links") }
            var object = Object(entityUid: uid, id: id, before: try values(member(fields, "before")), after: try values(member(fields, "after")))
            for link in linkFields {
                guard let relation = UInt32(link.name), case .object(let sides) = link.value else { throw corrupt("a relation that is not one") }
                object.links[relation] = (try ids(member(sides, "before")), try ids(member(sides, "after")))
            }
            return object
        }
    }
}
