/// A to-many relation: a collection of `Target` objects that is read from the store when first
/// used and whose changes are written when the owning object is put (or by ``ToMany/applyToDb()``).
///
/// Either a standalone many-to-many relation (kept in the model with a relation ID and UID) or a
/// backlink (`// cellar: backlink = "author"`): the `Target` objects whose ``ToOne`` or ``ToMany``
/// named `author` points at the owner. Adding to a backlink of a ``ToOne`` sets that ``ToOne``.
///
/// ```swift
/// note.tags.append(work)        // work must have been put
/// try notes.put(note)           // stores the note and its new link
/// let tags = Array(note.tags)   // read from the store on first use
/// ```
///
/// Reading it inside a collection operation cannot throw: a read that fails leaves it empty; call
/// ``ToMany/resolve()`` to see the error. Not thread-safe, like the object that holds it.
public final class ToMany<Target: EntityInspectable>: RandomAccessCollection, RangeReplaceableCollection,
    ExpressibleByNilLiteral, ExpressibleByArrayLiteral, CustomStringConvertible {
    /// The related objects.
    public typealias Element = Target
    /// Positions in the collection, from 0.
    public typealias Index = Int

    private var items: [Target] = []
    /// Whether `items` was read from (or written to) the store for the current owner.
    private var isResolved = false
    /// Whether `items` differs from what the store holds.
    private var changed = false
    /// Targets linked in the store but not held there when the relation was read (a synced
    /// store's object that has not arrived, or left its subscriptions): not in `items`, and kept
    /// linked when the changes are written.
    private var absent: Set<Id> = []
    private weak var store: Store?
    private var owner: Id = 0
    private var link: RelationLink?

    /// An empty relation; once the owning object is read or put, it reads its objects from the store
    /// when first used.
    public required init() {}

    /// An empty relation, written `nil`.
    public required convenience init(nilLiteral: ()) { self.init() }

    /// A relation to these objects, written as an array literal; the owner's put writes the links
    /// (each object must have been put).
    public required convenience init(arrayLiteral elements: Target...) {
        self.init()
        items = elements
        changed = !elements.isEmpty
    }

    // MARK: Collection

    /// The position of the first object (reading the objects from the store first, when due).
    public var startIndex: Int { resolveIfNeeded(); return items.startIndex }
    /// The position after the last object (reading the objects from the store first, when due).
    public var endIndex: Int { resolveIfNeeded(); return items.endIndex }

    /// The object at `position`.
    public subscript(position: Int) -> Target {
        resolveIfNeeded()
        return items[position]
    }

    /// Replaces the objects in `subrange` with `newElements`; the change is written with the owner's
    /// next put (or ``applyToDb()``). Appending, inserting and removing go through it.
    public func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C) where C.Element == Target {
        resolveIfNeeded()
        items.replaceSubrange(subrange, with: newElements)
        changed = true
    }

    /// Removes the objects `shouldBeRemoved` picks, in place (the standard library's default
    /// would put a new, unattached collection in the property's place).
    public func removeAll(where shouldBeRemoved: (Target) throws -> Bool) rethrows {
        resolveIfNeeded()
        let before = items.count
        try items.removeAll(where: shouldBeRemoved)
        if items.count != before { changed = true }
    }

    /// `ToMany<Target>(n objects)`, with `changed` when it holds changes not yet written.
    public var description: String { "ToMany<\(Target.self)>(\(items.count) objects\(changed ? ", changed" : ""))" }

    // MARK: The store

    /// Reads the relation's objects from the store again, dropping changes not yet written.
    /// Objects removed from the store are left out. So are targets a synced store does not hold
    /// (not arrived yet, or outside its subscriptions); writing the collection's changes keeps
    /// their links.
    public func resolve() throws {
        guard let store, owner != 0, let link else {
            throw CellarError.illegalArgument("this ToMany<\(Target.self)> belongs to an object that was never put or read; put the owning object first")
        }
        let box = store.box(for: Target.self)
        let schema = try box.schema.get()
        var absent: Set<Id> = []
        items = try store.inReadContext { context in
            try context.linkedIds(owner, link: link, targetSchema: schema).compactMap { id in
                let item = try box.get(id, schema: schema, context: context)
                if item == nil { absent.insert(id) }
                return item
            }
        }
        self.absent = absent
        isResolved = true
        changed = false
    }

    /// Writes the changes made to the collection (in a transaction of its own, or in the one open
    /// on this thread), without putting the owning object.
    public func applyToDb() throws {
        guard let store, owner != 0, let link else {
            throw CellarError.illegalArgument("this ToMany<\(Target.self)> belongs to an object that was never put or read; put the owning object instead")
        }
        try store.inWriteContext { context in try write(owner: owner, link: link, in: RelationWriter(context: context)) }
    }

    /// Lets the relation read from `store` as the relation `link` of object `owner`. Generated
    /// bindings call it after a get or put.
    @_spi(CellarGenerated) public func attach(_ store: Store, owner: Id, link: RelationLink) {
        if self.owner != owner {
            isResolved = false
            absent = []
        }
        self.store = store
        self.owner = owner
        self.link = link
    }

    /// Writes the changes as links of object `owner` (just put). Generated bindings call it.
    /// - Throws: `cannotRelateToUnsavedEntities` for an object in the collection that was never put.
    @_spi(CellarGenerated) public func write(owner: Id, link: RelationLink, in writer: RelationWriter) throws {
        guard changed else { return }
        let binding = Target.entityBinding
        var current: [Id] = []
        current.reserveCapacity(items.count)
        for item in items {
            let id = binding.id(of: item)
            guard id != 0 else {
                throw CellarError.cannotRelateToUnsavedEntities("a \(Target.self) in a ToMany has id 0; put it before the object that holds the ToMany")
            }
            current.append(id)
        }
        let context = writer.context
        let schema = try context.store.box(for: Target.self).schema.get()
        // What the store holds now (a collection assigned anew knows nothing of it).
        let before = Set(try context.linkedIds(owner, link: link, targetSchema: schema))
        let after = Set(current)
        for id in current where !before.contains(id) {
            try context.setLink(owner, id, link: link, linked: true, targetSchema: schema)
        }
        // (A target the collection did not hold because the store does not, stays linked.)
        for id in before where !after.contains(id) && !absent.contains(id) {
            try context.setLink(owner, id, link: link, linked: false, targetSchema: schema)
        }
        isResolved = true
        changed = false
        attach(context.store, owner: owner, link: link)
    }

    private func resolveIfNeeded() {
        guard !isResolved, !changed, store != nil, owner != 0, link != nil else { return }
        do {
            try resolve()
        } catch {
            isResolved = true
        }
    }
}
