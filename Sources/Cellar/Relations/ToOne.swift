/// A to-one relation: points at one `Target` object, stored as the target's id in an indexed
/// property of type `Relation` (flags `INDEXED | INDEX_PARTIAL_SKIP_ZERO`, 520). `nil` relates
/// to nothing.
///
/// ```swift
/// note.author.target = ada          // or: note.author = ToOne(ada)
/// try notes.put(note)               // throws cannotRelateToUnsavedEntities if ada was never put
/// let author = note.author.target   // read from the store; nil once ada is removed
/// ```
public final class ToOne<Target: EntityInspectable>: ExpressibleByNilLiteral, CustomStringConvertible {
    private var storedId: Id
    /// The object set through `target`, kept until the relation is changed again.
    private var object: Target?
    /// The store the owning object was read from or put into: where `target` is looked up.
    private weak var store: Store?

    /// A relation to the object with id `targetId`; 0 relates to nothing.
    public init(targetId: Id) { storedId = targetId }

    /// A relation to the object with this typed id; 0 relates to nothing.
    public convenience init(_ targetId: EntityId<Target>) { self.init(targetId: targetId.value) }

    /// A relation to `target` (which must have been put before the owning object is).
    public convenience init(_ target: Target?) {
        self.init(targetId: 0)
        self.target = target
    }

    /// A relation to nothing, written `nil`.
    public required convenience init(nilLiteral: ()) { self.init(targetId: 0) }

    /// The target object's id; 0 when there is none (or when the target set was never put).
    public var targetId: Id {
        get { object.map { Target.entityBinding.id(of: $0) } ?? storedId }
        set {
            storedId = newValue
            object = nil
        }
    }

    /// The target object: the one set, else the one stored under `targetId` in the store the owning
    /// object came from (nil when it was removed, or when the owning object was never put or read).
    public var target: Target? {
        get {
            if let object { return object }
            guard storedId != 0, let store else { return nil }
            return try? store.box(for: Target.self).get(storedId)
        }
        set {
            object = newValue
            storedId = newValue.map { Target.entityBinding.id(of: $0) } ?? 0
        }
    }

    /// Whether the relation points at an object (which may have been removed since).
    public var hasValue: Bool { targetId != 0 || object != nil }

    /// The id to store when the owning object is put. Generated bindings call it.
    /// - Throws: `cannotRelateToUnsavedEntities` when the target set was never put.
    @_spi(CellarGenerated) public func targetIdForPut() throws -> Id {
        guard let object else { return storedId }
        let id = Target.entityBinding.id(of: object)
        guard id != 0 else {
            throw CellarError.cannotRelateToUnsavedEntities("the \(Target.self) set as a ToOne target has id 0; put it before the object that points at it")
        }
        return id
    }

    /// Lets `target` read from `store`. Generated bindings call it after a get or put.
    @_spi(CellarGenerated) public func attach(_ store: Store) { self.store = store }

    /// `ToOne<Target>(id)`, or `ToOne<Target>(nil)` when it points at nothing.
    public var description: String { hasValue ? "ToOne<\(Target.self)>(\(targetId))" : "ToOne<\(Target.self)>(nil)" }
}
