/// What `Box.put` may do with an object.
public enum PutMode: Sendable {
    /// Insert a new object (id 0, or an id not stored yet) or replace the stored one.
    case put
    /// Only insert: an object whose id is already stored throws `CellarError.idAlreadyExists`.
    case insert
    /// Only replace: an object whose id is not stored (or is 0) throws `CellarError.notFound`.
    case update
}
