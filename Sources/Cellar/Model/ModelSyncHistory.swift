/// What the sync says when the database was made with another version of the model file than
/// the code's, in the three ways that happens, each with its own advice:
///
/// - **A recreated model file**: the model JSON was deleted and generated anew (ObjectBox's
///   "nuke option"), so the code's model shares no UID with the database's, live or retired,
///   and its IDs start over at 1. Nothing can be synced: delete the database, or restore the old
///   model file to keep the data.
/// - **A moved ID**: a UID the database knows has another ID in the code's model, as when a merge
///   conflict of the model JSON (two entities with the same ID) was resolved by giving one of them
///   the next free ID. The databases made before that change store it under the old ID and
///   cannot follow: a development database is recreated. The model file is left as it is, since
///   the databases made with it since use the new ID.
/// - **A reused ID**: something new to the database has an ID the database gave out before for
///   something else, as when two branches of the model file each gave out the same ID and the
///   merge kept one. Which side has to give way depends on which model file is already shared,
///   so the message gives both ways.
extension ModelSync {
    /// Refuses a code model that shares no UID with the database's: a recreated model file.
    static func checkSameModelFile(code: Model, stored: Model) throws {
        guard let someCode = code.entities.first, let someStored = stored.entities.first,
              code.allUids.isDisjoint(with: stored.allUids) else { return }
        let example: String
        if let same = code.entities.first(where: { stored.entity(named: $0.name) != nil }),
           let old = stored.entity(named: same.name) {
            example = "entity \(same.name) is \(same.id) in the model, \(old.id) in the database"
        } else {
            example = "the model has entity \(someCode.name) (\(someCode.id)), the database entity \(someStored.name) (\(someStored.id))"
        }
        throw CellarError.schema("the model file was recreated: none of its UIDs is known to this database (\(example)), as when the model JSON is deleted and generated anew. The database cannot be synced with it. To start afresh with the new model file, delete the database (its data is lost); to keep the data, restore the old model file (from version control) and run the generator again")
    }

    /// Refuses a code model in which an entity, property, index or relation the database knows
    /// (by UID) has another ID: a moved ID. Runs before the sync proper, so that a moved ID is
    /// named as such, never mistaken for a new thing reusing the old ID of another.
    static func checkNoIdMoved(code: Model, stored: Model) throws {
        let storedEntities = Dictionary(stored.entities.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
        for entity in code.entities {
            guard let old = storedEntities[entity.id.uid] else { continue }
            if old.id.id != entity.id.id {
                let holder = code.entities.first { $0.id.id == old.id.id }
                throw CellarError.schema(moved("entity \(entity.name)", entity.name, "entities", code: entity.id, stored: old.id,
                                               holder: holder.map { "entity \($0.name) (\($0.id))" }))
            }
            let oldProperties = Dictionary(old.properties.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
            for property in entity.properties {
                guard let before = oldProperties[property.id.uid], before.id.id != property.id.id else { continue }
                let holder = entity.properties.first { $0.id.id == before.id.id }
                throw CellarError.schema(moved("property \(entity.name).\(property.name)", "\(entity.name).\(property.name)", "properties",
                                               code: property.id, stored: before.id,
                                               holder: holder.map { "property \(entity.name).\($0.name) (\($0.id))" }))
            }
        }
        try checkNoIdMoved(code: code.namedIndexIds, stored: stored.namedIndexIds, kinds: "indexes",
                           describe: { "the index of \($0)" }, call: { "the index of \($0)" })
        try checkNoIdMoved(code: code.namedRelationIds, stored: stored.namedRelationIds, kinds: "relations",
                           describe: { "relation \($0)" }, call: { $0 })
    }

    /// Throws when an item of `code` (an index, a relation) has a UID that `stored` knows under
    /// another ID; `describe` turns an item's name into the words for it, `call` into what the
    /// advice calls it.
    private static func checkNoIdMoved(code: [(name: String, id: IdUid)], stored: [(name: String, id: IdUid)], kinds: String,
                                       describe: (String) -> String, call: (String) -> String) throws {
        let before = Dictionary(stored.map { ($0.id.uid, $0) }, uniquingKeysWith: { a, _ in a })
        for item in code {
            guard let old = before[item.id.uid], old.id.id != item.id.id else { continue }
            let holder = code.first { $0.id.id == old.id.id }
            throw CellarError.schema(moved(describe(item.name), call(item.name), kinds, code: item.id, stored: old.id,
                                           holder: holder.map { "\(describe($0.name)) (\($0.id))" }))
        }
    }

    /// The message for something new to the database (`what`, called `name` in the advice) whose
    /// ID the database gave out before, as `used` says ("for entity Bear (42:9876), which the
    /// model does not have"). `next` is the next free ID, `last` the last-ID member that takes
    /// it too.
    static func reusedId(_ what: String, _ name: String, id: IdUid, used: String, next: UInt32, last: String) -> String {
        "\(what) (\(id)) is new to this database, but the database used ID \(id.id) \(used); IDs are never reused. Two versions of the model file gave out ID \(id.id), as on two branches that each added something. If the model file with \(name) at \(id) is already shared, this database was made with another version of it: if it is a development database, delete it; it is created anew with the model (its data is lost). If not, give \(name) the ID \(next): write \"\(IdUid(id: next, uid: id.uid))\" as its \"id\" and in \(last)"
    }

    /// The message for a moved ID: `what` (called `name` in the advice, one of `kinds`) is `code`
    /// in the code's model, `stored` in the database; `holder` is what has the old ID in the
    /// code's model now.
    private static func moved(_ what: String, _ name: String, _ kinds: String, code: IdUid, stored: IdUid, holder: String?) -> String {
        let start = "\(what) has moved: it is \(code) in the model but \(stored) in this database"
        let recreate = "A database cannot follow an ID change, and this one was made before it: if it is a development database, delete it; it is created anew with the model (its data is lost)"
        if let holder {
            return "\(start), and \(holder) has ID \(stored.id) now, as when a merge conflict of the model JSON (two \(kinds) with ID \(stored.id)) was resolved by giving \(name) the next free ID. \(recreate). Keep the model file as it is: setting \(name) back to \(stored) would clash with \(holder), and the databases made with the model since have \(name) at \(code.id)"
        }
        return "\(start): its ID was changed in the model file since this database was made. \(recreate). Only if that change was a mistake and the model file with it was never shared, set \(name) back to \"\(stored)\" in the model file instead"
    }
}
