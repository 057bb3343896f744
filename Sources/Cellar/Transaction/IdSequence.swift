import CellarStorage

/// The object ids of one entity within a write transaction: which one `put` hands out next.
///
/// Ids are never reused, even after a remove. The next id is one above both the highest id in the
/// entity's tree and a stored `floor`: the floor is written only when a remove takes away an id
/// above it (or `removeAll` empties the tree), so a put never writes more than its record.
@usableFromInline
struct IdSequence {
    /// The next id to hand out.
    @usableFromInline var next: Id
    /// The highest id removed (or otherwise handed out) that the tree may no longer hold.
    @usableFromInline var floor: Id
    @usableFromInline var floorChanged = false

    /// The floor stored in the meta tree for `entity` (its bytes, nil when none is stored: 0).
    /// Throws `fileCorrupt` for bytes that are no floor.
    static func floor(stored bytes: [UInt8]?, entity: String) throws -> Id {
        guard let bytes else { return 0 }
        guard bytes.count == 8 else {
            throw CellarError.fileCorrupt("the id sequence of entity \(entity) has \(bytes.count) bytes, expected 8")
        }
        return bytes.withUnsafeBytes { $0.loadLE(Id.self, at: 0) }
    }

    init(highestInTree: Id, floor: Id) {
        self.floor = floor
        next = max(highestInTree, floor) &+ 1
    }

    /// Hands out the next id.
    @inlinable
    mutating func take() throws -> Id {
        guard next != 0 else {
            throw CellarError.illegalArgument("the object ids are used up (the highest, \(Id.max), was handed out)")
        }
        defer { next &+= 1 }
        return next
    }

    /// Notes an id set by the app, so that ids handed out later do not collide with it.
    @inlinable
    mutating func noteAssigned(_ id: Id) {
        if next != 0 && id >= next { next = id &+ 1 }
    }

    /// Notes that `id` was removed: it must not be handed out again.
    @inlinable
    mutating func noteRemoved(_ id: Id) {
        if id > floor {
            floor = id
            floorChanged = true
        }
        // `next` stays above every id handed out, the removed one included (the sequence may
        // have been loaded after the remove, from a tree that no longer holds it).
        noteAssigned(id)
    }
}
