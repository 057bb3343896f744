import CellarStorage

/// Everything Cellar throws. Each case names what happened; `description` says what to do.
public enum CellarError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The model given in code cannot be used with this database (or is inconsistent in itself).
    /// The message names the entity or property, the values in conflict and what to do.
    case schema(String)
    /// Bytes read from the database failed a check. The store is not changed by the read.
    case fileCorrupt(String)
    /// A write was started inside a read-only transaction on the same thread.
    case cannotWriteWhileReading
    /// `put(mode: .update)` (or an operation that needs the object) found no object with this id.
    case notFound(entity: String, id: Id)
    /// `put(mode: .insert)` found an object with this id already stored.
    case idAlreadyExists(entity: String, id: Id)
    /// A unique property already has this value in another object.
    case uniqueViolation(property: String, value: String)
    /// `Query.findUnique()` found more than one object.
    case nonUniqueResult(count: Int)
    /// A relation points at an object that was never stored; put the target first.
    case cannotRelateToUnsavedEntities(String)
    /// A persistent identifier of another store was used with this one.
    case identifierFromAnotherStore
    /// A persistent identifier of one entity was passed to the box of another.
    case identifierOfAnotherEntity(identifier: String, box: String)
    /// An argument is outside what the call accepts.
    case illegalArgument(String)
    /// The store was opened read-only.
    case readOnly
    /// The store was closed.
    case storeClosed
    /// A failure in the storage engine (I/O, a lock held by another process, a failed sync, …).
    case storage(StorageError)

    public var description: String {
        switch self {
        case .schema(let message):
            return "schema: \(message)"
        case .fileCorrupt(let message):
            return "the database is corrupt: \(message). Restore it from a backup, or run `cellar verify` on it to see what is damaged"
        case .cannotWriteWhileReading:
            return "cannot write inside a read-only transaction: use runInTransaction (or store.write) for the outer transaction"
        case .notFound(let entity, let id):
            return "no \(entity) with id \(id) is stored"
        case .idAlreadyExists(let entity, let id):
            return "a \(entity) with id \(id) is stored already; use put mode .put or .update to replace it"
        case .uniqueViolation(let property, let value):
            return "\(property) must be unique, and \(value) is stored already in another object"
        case .nonUniqueResult(let count):
            return "the query was to find one object at most, but \(count) match; use find() or findFirst(), or narrow the conditions"
        case .cannotRelateToUnsavedEntities(let message):
            return "cannot relate to an object that was never put: \(message)"
        case .identifierFromAnotherStore:
            return "the persistent identifier belongs to another store"
        case .identifierOfAnotherEntity(let identifier, let box):
            return "the persistent identifier \(identifier) names an object of another entity than \(box); resolve it with the box of its entity"
        case .illegalArgument(let message):
            return "illegal argument: \(message)"
        case .readOnly:
            return "the store was opened read-only"
        case .storeClosed:
            return "the store was closed"
        case .storage(let error):
            return error.description
        }
    }

    /// The `CellarError` for an error from the engine; other errors are returned unchanged.
    @usableFromInline
    static func wrap(_ error: any Error) -> any Error {
        guard let storage = error as? StorageError else { return error }
        switch storage {
        case .fileCorrupt: return CellarError.fileCorrupt(storage.description)
        case .readOnly: return CellarError.readOnly
        case .closed, .transactionClosed: return CellarError.storeClosed
        case .illegalArgument(let message): return CellarError.illegalArgument(message)
        default: return CellarError.storage(storage)
        }
    }
}

/// Runs `body`, turning the engine's errors into `CellarError`s.
@inlinable
func translatingErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch {
        throw CellarError.wrap(error)
    }
}
