/// How a `ToMany` finds its objects; the generator writes it for each `ToMany` property.
@_spi(CellarGenerated) public enum RelationLink: Sendable, Hashable {
    /// A standalone to-many relation of the owning entity: its relation ID in the model.
    case relation(UInt32)
    /// The backlink of a standalone to-many relation of the target entity (that relation's ID):
    /// the objects whose relation holds the owner.
    case backlinkOfRelation(UInt32)
    /// The backlink of a to-one relation of the target entity (the `ToOne` property's ID): the
    /// objects whose `ToOne` points at the owner.
    case backlinkOfToOne(property: UInt32)
    /// The backlink of a to-one relation inside embedded objects of the target entity: `path`
    /// holds the property IDs from the target through its embedded properties to the `ToOne`
    /// (`tasks.assignee`). The objects some of whose embedded objects on that path point at the
    /// owner. Read-only: the link is changed through the `ToOne` inside the embedded object.
    case backlinkOfEmbeddedToOne(path: [UInt32])
}

/// Writes the relation changes of an object being put, inside the put's transaction. Generated
/// bindings pass it to `ToMany.write(owner:link:in:)`.
public struct RelationWriter {
    @usableFromInline let context: TransactionContext

    @usableFromInline
    init(context: TransactionContext) { self.context = context }
}
