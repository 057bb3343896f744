/// A to-one relation: the id of a `Target` object, stored as an indexed property (type
/// `Relation`). `nil` (or 0) relates to nothing.
///
/// This version keeps and stores the target's id; resolving the target object (`target`) and
/// relating unsaved objects come with the relations API.
public final class ToOne<Target>: ExpressibleByNilLiteral, CustomStringConvertible {
    /// The target object's id; 0 when there is none.
    public var targetId: Id

    public init(targetId: Id) { self.targetId = targetId }

    public convenience init(_ targetId: EntityId<Target>) { self.init(targetId: targetId.value) }

    public required convenience init(nilLiteral: ()) { self.init(targetId: 0) }

    /// Whether the relation points at an object.
    public var hasValue: Bool { targetId != 0 }

    public var description: String { hasValue ? "ToOne<\(Target.self)>(\(targetId))" : "ToOne<\(Target.self)>(nil)" }
}
