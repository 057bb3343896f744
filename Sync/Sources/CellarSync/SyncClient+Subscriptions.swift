@_spi(Sync) import Cellar
import Foundation

/// Subscriptions: with ``SyncOptions/bySubscription`` set, a store holds the objects that match
/// one of its subscriptions and no others. They are kept in the store, so they last across
/// launches; a change takes effect at the next round (the live loop's at once): objects that
/// now match arrive, objects that no longer match leave the store (not the server).
///
/// ```swift
/// var options = SyncOptions()
/// options.bySubscription = true
/// let client = SyncClient(store: store, server: server, options: options)
/// try await client.subscribe(try notes.query { Note.owner == me && Note.archived == false }.build(), name: "mine")
/// try await client.sync()
/// ```
extension SyncClient {
    /// Subscribes to the objects `query` matches. With a `name`, replaces the subscription of
    /// that name; without one, subscribing to the same query again changes nothing.
    ///
    /// The server evaluates the query's condition in SQL, exactly as the store would: conditions
    /// on a property's own value (`==`, `!=`, `<`, `<=`, `>`, `>=`, `isBetween`, `isIn`,
    /// `isNotIn`, `isNil`, `isNotNil`; on strings, case-sensitive `startsWith`, `endsWith` and
    /// `contains`), combined with `&&` and `||`. Its order and limits do not matter. The values
    /// are those of the query when subscribing (set parameters first).
    ///
    /// - Throws: ``SyncError`` `invalidArgument` when ``SyncOptions/bySubscription`` is not set,
    ///   for an insert-only entity, or for a condition the server cannot evaluate (naming it:
    ///   links, full-text, geo, vectors, collections, flex values, embedded objects, the id, to-one
    ///   relations, strings ignoring case, decimals).
    @discardableResult
    public func subscribe<E: EntityInspectable>(_ query: Query<E>, name: String? = nil) throws -> Subscription {
        guard options.bySubscription else {
            throw SyncError(.invalidArgument, "subscribe: this client syncs every object; set SyncOptions.bySubscription to sync by subscription")
        }
        guard let (entity, condition) = try translate(query) else {
            throw SyncError(.invalidArgument, "subscribe: the query's entity is not synced")
        }
        guard !entity.asymmetric, !options.asymmetric.contains(entity.name) else {
            throw SyncError(.invalidArgument, "subscribe: \(entity.name) is insert-only: its objects are never pulled")
        }
        let subscription = Subscription(name: name, entity: entity.name, entityUid: entity.uid, condition: condition)
        var state = try SubscriptionState.read(store)
        if let name {
            state.subscriptions.removeAll { $0.name == name }
        } else if state.subscriptions.contains(subscription) {
            return subscription
        }
        state.subscriptions.append(subscription)
        try state.write(store)
        subscriptionsChanged()
        return subscription
    }

    /// Ends the subscription named `name`; false when there is none.
    @discardableResult
    public func unsubscribe(named name: String) throws -> Bool {
        try unsubscribe { $0.name == name }
    }

    /// Ends every subscription to the same objects as `query` (same entity, same condition),
    /// named or not; false when there is none.
    @discardableResult
    public func unsubscribe<E: EntityInspectable>(_ query: Query<E>) throws -> Bool {
        guard let (entity, condition) = try translate(query) else { return false }
        return try unsubscribe { $0.entityUid == entity.uid && $0.condition == condition }
    }

    /// The synced entity of `query` and its condition as a ``Subscription/condition`` template;
    /// nil when the entity is not synced. Throws `invalidArgument` for a condition the server
    /// cannot evaluate.
    private func translate<E: EntityInspectable>(_ query: Query<E>) throws -> (entity: ReplicaSchema.Entity, condition: String)? {
        let (uid, filter): (UInt64, ReplicaFilter?)
        do {
            (uid, filter) = try query.replicaFilter()
        } catch let error as CellarError {
            throw SyncError(.invalidArgument, error.message)
        }
        guard let entity = try store.replicaSchema().entities.first(where: { $0.uid == uid }) else { return nil }
        return (entity, try SubscriptionSQL.template(filter, entity: entity))
    }

    /// Ends every subscription (with ``SyncOptions/bySubscription`` set, the store then lets go
    /// of every object at the next round, once its own changes are on the server).
    public func unsubscribeAll() throws {
        _ = try unsubscribe { _ in true }
    }

    private func unsubscribe(where matches: (Subscription) -> Bool) throws -> Bool {
        var state = try SubscriptionState.read(store)
        let before = state.subscriptions.count
        state.subscriptions.removeAll(where: matches)
        guard state.subscriptions.count < before else { return false }
        try state.write(store)
        subscriptionsChanged()
        return true
    }

    /// The store's subscriptions, in the order they were made.
    public nonisolated func subscriptions() throws -> [Subscription] {
        try SubscriptionState.read(store).subscriptions
    }
}
