import CellarStorage
import Foundation

/// Everything Cellar throws: a `code` to match on, a `message` in words, and the values involved
/// where there are some (`entity`, `id`, `property`, `value`, …). `description` says what to do.
///
/// Match the code, not the message (the message may be reworded):
///
/// ```swift
/// do {
///     try authors.put(author)
/// } catch let error as CellarError where error.code == .uniqueViolation {
///     print("\(error.property ?? "?") already has \(error.value ?? "?")")
/// } catch CellarError.Code.readOnly {   // a code is also a pattern for any error
///     …
/// }
/// ```
///
/// New codes may be added in later versions: a `switch` over `code` needs a `default`.
public struct CellarError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure an error is. An extensible set: compare with `==` or match with a
    /// `switch` that has a `default`, as new codes may be added.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, such as `"notFound"`.
        public var rawValue: String
        /// A code with this name; the codes Cellar throws are the static constants of ``CellarError/Code``.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name, as ``rawValue``.
        public var description: String { rawValue }

        /// The model given in code cannot be used with this database (or is inconsistent in itself).
        public static let schema = Code(rawValue: "schema")
        /// Bytes read from the database failed a check. The store is not changed by the read.
        public static let fileCorrupt = Code(rawValue: "fileCorrupt")
        /// A write was started inside a read-only transaction on the same thread.
        public static let cannotWriteWhileReading = Code(rawValue: "cannotWriteWhileReading")
        /// `put(mode: .update)` (or an operation that needs the object) found no object with the id.
        public static let notFound = Code(rawValue: "notFound")
        /// `put(mode: .insert)` found an object with the id already stored.
        public static let idAlreadyExists = Code(rawValue: "idAlreadyExists")
        /// A unique property already has the value in another object.
        public static let uniqueViolation = Code(rawValue: "uniqueViolation")
        /// `Query.findUnique()` found more than one object.
        public static let nonUniqueResult = Code(rawValue: "nonUniqueResult")
        /// A remove refused by a relation's `deny` delete rule: objects are still linked.
        public static let deleteDenied = Code(rawValue: "deleteDenied")
        /// A relation points at an object that was never stored; put the target first.
        public static let cannotRelateToUnsavedEntities = Code(rawValue: "cannotRelateToUnsavedEntities")
        /// A persistent identifier of another store was used with this one.
        public static let identifierFromAnotherStore = Code(rawValue: "identifierFromAnotherStore")
        /// A persistent identifier of one entity was passed to the box of another.
        public static let identifierOfAnotherEntity = Code(rawValue: "identifierOfAnotherEntity")
        /// An argument is outside what the call accepts.
        public static let illegalArgument = Code(rawValue: "illegalArgument")
        /// The store was opened read-only.
        public static let readOnly = Code(rawValue: "readOnly")
        /// The store was closed.
        public static let storeClosed = Code(rawValue: "storeClosed")
        /// A failure in the storage engine (I/O, a lock held by another process, a failed sync, …):
        /// `storageError` has the engine's error.
        public static let storage = Code(rawValue: "storage")
        /// The encryption key given does not open the store.
        public static let wrongEncryptionKey = Code(rawValue: "wrongEncryptionKey")
        /// The store is encrypted and no key was given.
        public static let encryptionKeyRequired = Code(rawValue: "encryptionKeyRequired")
        /// A key was given for a store that is not encrypted.
        public static let notEncrypted = Code(rawValue: "notEncrypted")
        /// This build has no zstd (iOS, tvOS, watchOS, visionOS, macOS without the `ZstdOnMacOS`
        /// trait, or Linux without the `Zstd` trait): the store holds zstd-compressed values, or
        /// the options ask for compression. See `Compression.isAvailable`.
        public static let compressionUnavailable = Code(rawValue: "compressionUnavailable")

        /// True when `error` is a ``CellarError`` with this code: lets a code be a `catch` pattern
        /// (`catch CellarError.Code.fileCorrupt`).
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? CellarError)?.code == code
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// The message and the values involved, in one shared reference: an error is two words wide,
    /// so that a `Result` or an optional holding one (a box keeps its schema look-up as a
    /// `Result`) stays small and copies without calling `memcpy`.
    private var details: Details

    /// What happened, in words: for `.schema`, `.fileCorrupt`, `.illegalArgument` and
    /// `.cannotRelateToUnsavedEntities` the details (the entity or property, the values in
    /// conflict, what to do); for the others the whole sentence `description` is.
    public var message: String {
        get { details.message }
        set { update { $0.message = newValue } }
    }
    /// The entity involved: of the object not found or already stored (`.notFound`,
    /// `.idAlreadyExists`), of the box an identifier was passed to (`.identifierOfAnotherEntity`).
    public var entity: String? {
        get { details.entity }
        set { update { $0.entity = newValue } }
    }
    /// The object id involved (`.notFound`, `.idAlreadyExists`).
    public var id: Id? {
        get { details.id }
        set { update { $0.id = newValue } }
    }
    /// The property involved (`.uniqueViolation`: `Entity.property`).
    public var property: String? {
        get { details.property }
        set { update { $0.property = newValue } }
    }
    /// The value involved, as text (`.uniqueViolation`: strings quoted).
    public var value: String? {
        get { details.value }
        set { update { $0.value = newValue } }
    }
    /// How many objects matched (`.nonUniqueResult`).
    public var count: Int? {
        get { details.count }
        set { update { $0.count = newValue } }
    }
    /// The persistent identifier involved, as text (`.identifierOfAnotherEntity`).
    public var identifier: String? {
        get { details.identifier }
        set { update { $0.identifier = newValue } }
    }
    /// The engine's error (`.storage`).
    public var storageError: StorageError? {
        get { details.storageError }
        set { update { $0.storageError = newValue } }
    }

    /// An error of `code` with `message` and the values involved.
    public init(_ code: Code, message: String, entity: String? = nil, id: Id? = nil, property: String? = nil,
                value: String? = nil, count: Int? = nil, identifier: String? = nil, storageError: StorageError? = nil) {
        self.code = code
        self.details = Details(message: message, entity: entity, id: id, property: property, value: value,
                               count: count, identifier: identifier, storageError: storageError)
    }

    /// Whether two errors have the same code and the same details (message, entity, id, property and
    /// the other values).
    public static func == (a: CellarError, b: CellarError) -> Bool {
        a.code == b.code && (a.details === b.details || a.details.sameValues(as: b.details))
    }

    /// Changes the details, copying them first when another error shares them.
    private mutating func update(_ change: (Details) -> Void) {
        if !isKnownUniquelyReferenced(&details) { details = details.copy() }
        change(details)
    }

    /// An error's message and values. Changed only through `update`, which copies a shared one
    /// first: once an error is shared across threads, its details are never written again.
    private final class Details: @unchecked Sendable {
        var message: String
        var entity: String?
        var id: Id?
        var property: String?
        var value: String?
        var count: Int?
        var identifier: String?
        var storageError: StorageError?

        init(message: String, entity: String?, id: Id?, property: String?, value: String?, count: Int?,
             identifier: String?, storageError: StorageError?) {
            (self.message, self.entity, self.id, self.property) = (message, entity, id, property)
            (self.value, self.count, self.identifier, self.storageError) = (value, count, identifier, storageError)
        }

        func copy() -> Details {
            Details(message: message, entity: entity, id: id, property: property, value: value, count: count,
                    identifier: identifier, storageError: storageError)
        }

        func sameValues(as other: Details) -> Bool {
            message == other.message && entity == other.entity && id == other.id && property == other.property
                && value == other.value && count == other.count && identifier == other.identifier
                && storageError == other.storageError
        }
    }

    /// The message with what to do, as Cellar has always worded it.
    public var description: String {
        switch code {
        case .schema: "schema: \(message)"
        case .fileCorrupt: "the database is corrupt: \(message). Restore it from a backup, or run `cellar verify` on it to see what is damaged"
        case .cannotRelateToUnsavedEntities: "cannot relate to an object that was never put: \(message)"
        case .illegalArgument: "illegal argument: \(message)"
        default: message
        }
    }

    // MARK: The errors Cellar throws

    /// A `.schema` error: the model cannot be used (`message` names the entity or property).
    public static func schema(_ message: String) -> CellarError { CellarError(.schema, message: message) }

    /// A `.fileCorrupt` error: bytes read failed a check (`message` names what and where).
    public static func fileCorrupt(_ message: String) -> CellarError { CellarError(.fileCorrupt, message: message) }

    /// The `.cannotWriteWhileReading` error.
    public static let cannotWriteWhileReading = CellarError(
        .cannotWriteWhileReading,
        message: "cannot write inside a read-only transaction: use runInTransaction (or store.write) for the outer transaction")

    /// A `.notFound` error for object `id` of `entity`.
    public static func notFound(entity: String, id: Id) -> CellarError {
        CellarError(.notFound, message: "no \(entity) with id \(id) is stored", entity: entity, id: id)
    }

    /// An `.idAlreadyExists` error for object `id` of `entity`.
    public static func idAlreadyExists(entity: String, id: Id) -> CellarError {
        CellarError(.idAlreadyExists, message: "a \(entity) with id \(id) is stored already; use put mode .put or .update to replace it",
                    entity: entity, id: id)
    }

    /// A `.uniqueViolation` error: `property` (`Entity.property`) already has `value` (as text).
    public static func uniqueViolation(property: String, value: String) -> CellarError {
        CellarError(.uniqueViolation, message: "\(property) must be unique, and \(value) is stored already in another object",
                    property: property, value: value)
    }

    /// A `.deleteDenied` error: object `id` of `entity` still has `count` objects linked through
    /// `relation`, whose delete rule is `deny`.
    public static func deleteDenied(entity: String, id: Id, relation: String, count: Int) -> CellarError {
        CellarError(.deleteDenied,
                    message: "\(entity) \(id) cannot be removed: \(relation) denies it while \(count) object\(count == 1 ? " is" : "s are") linked; remove or unlink \(count == 1 ? "it" : "them") first",
                    entity: entity, id: id, property: relation, count: count)
    }

    /// A `.nonUniqueResult` error: `count` objects matched.
    public static func nonUniqueResult(count: Int) -> CellarError {
        CellarError(.nonUniqueResult,
                    message: "the query was to find one object at most, but \(count) match; use find() or findFirst(), or narrow the conditions",
                    count: count)
    }

    /// A `.cannotRelateToUnsavedEntities` error (`message` names the relation).
    public static func cannotRelateToUnsavedEntities(_ message: String) -> CellarError {
        CellarError(.cannotRelateToUnsavedEntities, message: message)
    }

    /// The `.identifierFromAnotherStore` error.
    public static let identifierFromAnotherStore = CellarError(
        .identifierFromAnotherStore, message: "the persistent identifier belongs to another store")

    /// An `.identifierOfAnotherEntity` error: `identifier` (as text) passed to the box of entity `box`.
    public static func identifierOfAnotherEntity(identifier: String, box: String) -> CellarError {
        CellarError(.identifierOfAnotherEntity,
                    message: "the persistent identifier \(identifier) names an object of another entity than \(box); resolve it with the box of its entity",
                    entity: box, identifier: identifier)
    }

    /// An `.illegalArgument` error (`message` says which argument and why).
    public static func illegalArgument(_ message: String) -> CellarError { CellarError(.illegalArgument, message: message) }

    /// The `.readOnly` error.
    public static let readOnly = CellarError(.readOnly, message: "the store was opened read-only")

    /// The `.storeClosed` error.
    public static let storeClosed = CellarError(.storeClosed, message: "the store was closed")

    /// A `.storage` error carrying the engine's `error`.
    public static func storage(_ error: StorageError) -> CellarError {
        CellarError(.storage, message: error.description, storageError: error)
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
        case .wrongEncryptionKey: return CellarError(.wrongEncryptionKey, message: storage.description, storageError: storage)
        case .encryptionKeyRequired: return CellarError(.encryptionKeyRequired, message: storage.description, storageError: storage)
        case .notEncrypted: return CellarError(.notEncrypted, message: storage.description, storageError: storage)
        case .compressionUnavailable: return CellarError(.compressionUnavailable, message: storage.description, storageError: storage)
        default: return CellarError.storage(storage)
        }
    }
}

extension CellarError: LocalizedError {
    /// The same as `description`, so that `localizedDescription` says what happened and what to do.
    public var errorDescription: String? { description }
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
