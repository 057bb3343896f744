@_spi(Sync) import Cellar
import Foundation

/// How a ``SyncClient`` syncs.
public struct SyncOptions: Sendable {
    /// The PostgreSQL schema (namespace) that holds the synced tables; every store syncing the
    /// same data names the same one. Default `cellar`.
    public var schema: String = "cellar"
    /// The history entries sent per push transaction. Default 500.
    public var pushEntries: Int = 500
    /// The changed objects sent per push transaction, at most: entries are added while they
    /// keep the push within it (an entry with more objects goes whole, alone). Default 10,000.
    /// While the server takes one push, the store gathers the next.
    public var pushObjects: Int = 10_000
    /// The server's changes read per pull transaction. Default 10,000.
    public var pullChanges: Int = 10_000
    /// The rows a push reads and writes per statement (the package's own tests make it small,
    /// so that a push runs many of them one after the other).
    var rowsPerStatement = 2_500
    /// Whether a push without a conflict resolver merges in SQL first (`MergingWrite`); off,
    /// it reads and merges every row in Swift (the package's tests compare the two).
    var mergesInSQL = true
    /// What a removal does to concurrent updates. Default: the removal wins.
    public var removals: RemovalRule = .win
    /// Decides conflicting values of a property instead of the last writer (see
    /// ``ConflictResolver``); nil: the last writer wins.
    public var resolver: ConflictResolver?
    /// Entities whose objects only go up: pushed, then removed from the store once the server
    /// holds them, never pulled (telemetry, logs). By name, beside the entities marked
    /// `// cellar: asymmetric` in the model, which are asymmetric whatever this says; every
    /// device that syncs them treats them alike.
    public var asymmetric: Set<String> = []
    /// Whether the store holds only the objects its subscriptions match
    /// (``SyncClient/subscribe(_:name:)``). Default false: every object of every synced entity.
    /// With it set, an entity without subscriptions syncs no object down; the store's own
    /// writes are pushed whatever they are, and those outside its subscriptions then leave it.
    public var bySubscription = false
    /// Whether history entries the server acknowledged are pruned from the store. Default true;
    /// turn it off when another consumer reads the history too (and prune for both).
    public var pruneAcknowledgedHistory = true
    /// The longest ``SyncClient/run()`` waits between two looks for local commits to push.
    /// A local commit and the server's announcement wake it at once; this is the safety net for
    /// a wake-up that never came. Default 1 s.
    public var pollInterval: Duration = .seconds(1)
    /// How long the server keeps the changes a device has not pulled yet, counted from the
    /// device's last sync (its last pull noted on the server). Changes every device seen within
    /// this time has pulled are dropped from `cellar_changes`; a device away longer, or a new
    /// one, reads the current rows instead of the changes (``SyncClient/Report/resynced``).
    /// nil: never prune. Default 30 days.
    public var changeRetention: Duration? = .seconds(30 * 86_400)
    /// How often a client prunes the server's changes by itself (after a pull). Default 1 hour.
    public var pruneInterval: Duration = .seconds(3_600)
    /// How often ``SyncClient/run()`` pulls even when the server announced nothing: a
    /// notification sent while the client was connecting is picked up then. Default 2 s.
    public var pullInterval: Duration = .seconds(2)
    /// The longest the server may take to answer one step: connecting, or one push or pull
    /// batch. Past it the connection is dropped (a server that died or a network gone silent
    /// can leave a query waiting forever) and the round fails, or ``SyncClient/run()`` connects
    /// again; nothing is lost. Default 60 s.
    public var timeout: Duration = .seconds(60)
    /// How long ``SyncClient/run()`` waits before it connects again after losing the server (it
    /// doubles up to 16 times this). Default 100 ms.
    public var retryDelay: Duration = .milliseconds(100)

    public init() {}

    /// What a removal does to updates of the same object made concurrently on other devices.
    public enum RemovalRule: Sendable, Equatable {
        /// A removed object stays removed: later pushes of its properties are dropped.
        case win
        /// A removal is one more change: it wins over property changes older than it, and an
        /// update newer than it brings the object back.
        case lastWriterWins
    }
}

/// Decides a conflict (see ``SyncConflict``): returns the value the server keeps. Runs on the
/// pushing device, inside its push transaction, once per conflicting property.
public typealias ConflictResolver = @Sendable (SyncConflict) -> SyncConflict.Resolution

/// Two devices changed the same property of the same object, each without having seen the
/// other's change. Without a resolver the newer clock wins (see the sync documentation).
public struct SyncConflict: Sendable {
    /// The entity's name.
    public var entity: String
    /// The property's name.
    public var property: String
    /// The object's global id.
    public var objectId: UUID
    /// The value the server holds, as PostgreSQL prints its column (nil: NULL; the JSON of a
    /// collection, a list of ids for a to-many relation), and when it was written (hybrid
    /// clock milliseconds).
    public var serverValue: String?
    public var serverMilliseconds: UInt64
    /// The value being pushed, as its column's text, and when it was written.
    public var incomingValue: String?
    public var incomingMilliseconds: UInt64

    /// What the server keeps.
    public enum Resolution: Sendable, Equatable {
        /// The server's value.
        case keepServer
        /// The pushed value.
        case takeIncoming
        /// Either clock's newer value (what happens without a resolver).
        case lastWriterWins
    }
}
