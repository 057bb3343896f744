/// What `Box.put` may do with an object.
public enum PutMode: Sendable {
    /// Insert a new object (id 0, or an id not stored yet) or replace the stored one.
    case put
    /// Only insert: an object whose id is already stored throws `CellarError.idAlreadyExists`, one
    /// whose primary key another object holds `CellarError.uniqueViolation`.
    case insert
    /// Only replace: an object whose id is not stored (or is 0) throws `CellarError.notFound`.
    /// With a primary key, the object to replace is the one holding the key (a missing key throws
    /// `notFound`).
    case update
    /// For an entity with a primary key (`// cellar: primaryKey`): replace the object holding the
    /// key, keeping its id, relations and backlinks (Realm's `update: .modified`), or insert a new
    /// one when no object holds it. The object put gets the stored id. Without a primary key, the
    /// same as `put`.
    case upsert
}
