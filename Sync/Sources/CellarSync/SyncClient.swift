@_spi(Sync) import Cellar
import Foundation
import Logging
import PostgresNIO

/// Keeps a store in step with a PostgreSQL server, and through it with every other store that
/// syncs the same data (the same model, the same ``SyncOptions/schema``).
///
/// The store must record its change history (``StoreOptions/changeHistory``): a push sends the
/// history's entries the server has not acknowledged, a pull applies what other devices pushed.
/// The app keeps working on the store without a connection; sync goes on from where it stopped.
///
/// ```swift
/// let client = SyncClient(store: store, server: try SyncServer(url: "postgres://app@db.example/notes?sslmode=require"))
/// try await client.sync()          // one round: push everything, pull everything
/// let task = Task { try await client.run() }   // or: keep syncing until cancelled
/// ```
public actor SyncClient {
    public let store: Store
    public let server: SyncServer
    public let options: SyncOptions
    private let logger: Logger
    private var connection: PostgresConnection?
    private var schema: ServerSchema?
    private var device: UUID?
    /// The history sequence the server acknowledged, as the store says (read once, then kept).
    private var acknowledged: UInt64 = 0
    private var pulled: UInt64 = 0
    /// Set by the listener when the server announces changes.
    private var announced = true
    /// Set when the listening connection ends (``run()`` connects again then).
    private var listenerLost = false
    private var listenerGeneration = 0
    /// What ``run()`` sleeps on: local commits and the server's announcements signal it.
    private let wakeup = Wakeup()

    /// A client for `store`, syncing with `server`. Nothing happens until ``sync()`` or ``run()``.
    public init(store: Store, server: SyncServer, options: SyncOptions = SyncOptions(), logger: Logger = Logger(label: "cellar.sync")) {
        self.store = store
        self.server = server
        self.options = options
        self.logger = logger
    }

    /// What a round of sync did.
    public struct Report: Sendable, Equatable {
        /// Objects sent to the server.
        public var pushed = 0
        /// History entries the server acknowledged.
        public var acknowledgedEntries = 0
        /// Server changes read, and objects of them written or removed in the store.
        public var pulledChanges = 0
        public var applied = 0
        /// Server values the store could not take (a unique constraint here), with the reason.
        public var refused: [String] = []
        /// Whether the store read the server's current rows instead of changes (the changes it
        /// needed were pruned, or it is new on a server that prunes).
        public var resynced = false
        /// Objects that left the store: they no longer match its subscriptions (they stay on
        /// the server).
        public var left = 0
    }

    /// One round: connects when not connected (creating or migrating the server's tables), pushes
    /// every change not acknowledged yet, then applies every change of the server not applied yet.
    /// Throws ``SyncError`` (the connection is dropped; the next call connects again) — nothing is
    /// lost: what was not acknowledged is pushed again, what was not applied is pulled again.
    @discardableResult
    public func sync() async throws -> Report {
        do {
            let connection = try await connect()
            var report = Report()
            try await push(on: connection, into: &report)
            try await pull(on: connection, into: &report)
            return report
        } catch {
            await disconnect()
            throw SyncError(error, doing: "syncing with \(server)", password: server.password)
        }
    }

    /// Syncs until the task is cancelled: pushes local commits as they come (a commit wakes the
    /// loop at once), pulls when the server announces changes (LISTEN/NOTIFY, which wakes it too) and
    /// at least every ``SyncOptions/pullInterval`` (a notification sent while not listening is
    /// not lost then), and connects again after losing the server or the listening connection
    /// (waiting ``SyncOptions/retryDelay``, doubled up to 16 times it while the server stays
    /// away). Errors are logged, not thrown; nothing is lost by them: what was not acknowledged
    /// is pushed again, what was not applied is pulled again.
    public func run() async {
        let wakeup = self.wakeup
        let commits = store.observeCommits(on: DispatchQueue(label: "cellar.sync.commits")) { wakeup.signal() }
        defer { commits.cancel() }
        var delay = options.retryDelay
        while !Task.isCancelled {
            var listener: PostgresConnection?
            var listening: Task<Void, Never>?
            do {
                let connection = try await connect()
                let listenerConnection = try await newConnection()
                listener = listenerConnection
                listenerLost = false
                listenerGeneration += 1
                let generation = listenerGeneration
                let channel = schema!.channel
                listening = Task { [weak self] in
                    do {
                        try await listenerConnection.listen(on: channel) { notifications in
                            // LISTEN is in place: a push announced before it was missed, so pull.
                            await self?.startedListening()
                            for try await _ in notifications { await self?.announce() }
                        }
                    } catch {}
                    await self?.loseListener(generation)
                }
                announced = true  // changes may have come while not listening
                var lastPull = ContinuousClock.now
                while !Task.isCancelled {
                    if listenerLost { throw SyncError(.connection, "the connection listening for changes was lost") }
                    var report = Report()
                    if try store.lastHistorySequence() > acknowledged { try await push(on: connection, into: &report) }
                    if announced || ContinuousClock.now - lastPull >= options.pullInterval {
                        announced = false
                        lastPull = .now
                        try await pull(on: connection, into: &report)
                    }
                    delay = options.retryDelay
                    let untilPull = options.pullInterval - (ContinuousClock.now - lastPull)
                    await wakeup.wait(upTo: max(.zero, min(options.pollInterval, untilPull)))
                }
            } catch is CancellationError {
            } catch {
                let wrapped = SyncError(error, doing: "syncing with \(server)", password: server.password)
                logger.warning("sync interrupted: \(wrapped.message)")
                await stopListening(listening, listener)
                await disconnect()
                if Task.isCancelled { break }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, options.retryDelay * 16)
                continue
            }
            await stopListening(listening, listener)
        }
        await disconnect()
    }

    /// Whether the store holds commits the server has not acknowledged yet; false when every
    /// local change is on the server (an app can say "synced" then).
    public nonisolated func hasPendingChanges() throws -> Bool {
        try store.replicaState().acknowledged < store.lastHistorySequence()
    }

    /// Closes the connection (a later ``sync()`` opens a new one).
    public func close() async { await disconnect() }

    /// How many times the live loop's listener has started listening (for the tests: a push
    /// after this is announced to the loop).
    private(set) var listenersStarted = 0

    private func startedListening() {
        listenersStarted += 1
        announce()
    }

    /// Subscriptions changed: the next round (the live loop's at once) brings the store in
    /// line with them.
    func subscriptionsChanged() { announce() }

    private func announce() {
        announced = true
        wakeup.signal()
    }

    /// The listener of `generation` ended; one of an earlier connection ending late is no news.
    private func loseListener(_ generation: Int) {
        if generation == listenerGeneration {
            listenerLost = true
            wakeup.signal()
        }
    }

    private func stopListening(_ task: Task<Void, Never>?, _ connection: PostgresConnection?) async {
        task?.cancel()
        if let connection { try? await connection.close() }
    }

    private func connect() async throws -> PostgresConnection {
        if let connection { return connection }
        let state = try store.replicaState()
        device = state.device
        acknowledged = state.acknowledged
        pulled = state.pulled
        let connection = try await newConnection()
        let (options, logger) = (self.options, self.logger)
        do {
            let replica = try store.replicaSchema()
            schema = try await Deadline.run("creating or migrating the server's tables", limit: options.timeout, closing: connection) {
                try await ServerSchema.migrate(replica, options: options, on: connection, logger: logger)
            }
            try await recogniseRestore(on: connection)
        } catch {
            try? await connection.close()
            throw error
        }
        self.connection = connection
        return connection
    }

    /// Gives the store a new device id when it was restored from an older copy. The server
    /// then knows the store's device id with pushes past the store's acknowledged sequence
    /// whose last entry the store does not have (none of that number, or another one). Left
    /// alone, such a store would lose its new changes numbered as ones the server already took
    /// (a push is skipped as a replay), and would never pull back the changes its original
    /// pushed after the copy was made (a device's own changes are not read back). Under a new
    /// id it pushes what it has again (the conflict rules make that a no-op for what the server
    /// holds) and pulls the original's changes as another device's.
    private func recogniseRestore(on connection: PostgresConnection) async throws {
        let ns = SQL.quote(options.schema)
        let (texts, logger) = ([UUIDText.text(device!)], self.logger)
        let rows = try await Deadline.run("reading this device's state on the server", limit: options.timeout, closing: connection) {
            try await connection.rows("SELECT acknowledged::text, acknowledged_at::text FROM \(ns).cellar_devices WHERE device = $1::uuid",
                                      texts, logger: logger)
        }
        guard let row = rows.first, let serverAcknowledged = row[0].flatMap({ UInt64($0) }), serverAcknowledged > acknowledged else { return }
        // A reply lost after the server took a push: the store has that push's last entry.
        if let at = row[1].flatMap({ Int64($0) }),
           try store.historyEntry(serverAcknowledged, hasTimestamp: HybridTimestamp(rawValue: UInt64(bitPattern: at))) {
            return
        }
        let old = device!
        device = try store.renewReplicaDevice()
        logger.warning("the server knows pushes of this store's device id \(old) that the store lacks (it was restored from an older copy): it syncs as device \(device!) from now on")
    }

    /// A new connection to the server, logged in within ``SyncOptions/timeout``.
    private func newConnection() async throws -> PostgresConnection {
        let (server, logger) = (self.server, self.logger)
        return try await Deadline.run("connecting", limit: options.timeout, closing: nil) {
            try await server.connect(logger: logger)
        }
    }

    private func disconnect() async {
        if let connection { try? await connection.close() }
        connection = nil
    }

    /// Pushes batch after batch (``SyncOptions/pushEntries``, ``SyncOptions/pushObjects``),
    /// each in a transaction of its own, acknowledged in the store once the server committed it.
    /// The store gathers the next batch while the server takes one (the store's work and the
    /// server's overlap); a batch that fails leaves the ones after it to the next sync.
    private func push(on connection: PostgresConnection, into report: inout Report) async throws {
        let push = Push(schema: schema!, options: options, device: device!, logger: logger)
        let limit = options.timeout
        let (store, entries, objects) = (self.store, options.pushEntries, options.pushObjects)
        var outgoing = try await OffPool.run { try store.outgoingChanges(limit: entries, objects: objects) }
        while outgoing.entries > 0 {
            let batch = outgoing
            // Detached: not run on this actor, which waits for the store meanwhile.
            let pushing = Task.detached {
                try await Deadline.run("pushing", limit: limit, closing: connection) { try await push.run(batch, on: connection) }
            }
            let next: OutgoingChanges
            do {
                next = try await OffPool.run { try store.outgoingChanges(limit: entries, objects: objects, after: batch.through) }
            } catch {
                _ = await pushing.result
                throw error
            }
            let result = try await pushing.value
            let pruning = options.pruneAcknowledgedHistory
            try await OffPool.run { try store.acknowledge(through: batch.through, dropping: result.asymmetric, pruning: pruning) }
            acknowledged = batch.through
            report.pushed += batch.changes.count
            report.acknowledgedEntries += batch.entries
            outgoing = next
        }
    }

    /// Pulls batch after batch, in a pipeline of three: while the server reads one batch, this
    /// process reads the batch before into changes and the store applies the one before that
    /// (the server's work, the reading and the applying overlap); batches are applied in their
    /// order. When changes the store needs were pruned, it reads the current rows instead
    /// (``resync(_:on:into:)``) and goes on from there. Then notes on the server how far the
    /// store has pulled.
    private func pull(on connection: PostgresConnection, into report: inout Report) async throws {
        var filtered = Pull(schema: schema!, options: options, device: device!, logger: logger)
        filtered.filters = try await alignSubscriptions(on: connection, into: &report)
        let pull = filtered
        let limit = options.timeout
        @Sendable func fetch(after sequence: UInt64) -> Task<Pull.Batch, any Error> {
            Task.detached {
                try await Deadline.run("pulling", limit: limit, closing: connection) { try await pull.fetch(after: sequence, on: connection) }
            }
        }
        var next = fetch(after: pulled)
        /// The batch before, being read into changes.
        var reading: Task<(Pull.Fetched, [ReplicaChange]), any Error>?
        defer {
            next.cancel()
            reading?.cancel()
        }
        pulling: while true {
            let batch = try await next.value
            var read: Task<(Pull.Fetched, [ReplicaChange]), any Error>?
            if case .changes(let fetched) = batch {
                next = fetch(after: fetched.through)
                // Detached: not run on this actor, which waits for the store meanwhile.
                read = Task.detached { (fetched, try await OffPool.run { try pull.changes(of: fetched) }) }
            }
            if let before = reading {
                let (fetched, changes) = try await before.value
                let store = self.store
                let result = try await OffPool.run { try pull.apply(fetched, changes, to: store) }
                pulled = result.through
                report.pulledChanges += result.changes
                note(result.report, in: &report)
            }
            reading = read
            switch batch {
            case .none:
                break pulling
            case .resync:
                try await resync(pull, on: connection, into: &report)
                next = fetch(after: pulled)
            case .changes:
                continue
            }
        }
        try await notePulled(on: connection)
    }

    /// Reads every row of every synced table (that the subscriptions take), in batches, and
    /// applies them as they are on the server (the conflict rules as for pulled changes); then
    /// goes on from the newest change number read before the rows. For a store whose next
    /// changes were pruned from the server, and for a new store on a server that pruned: the
    /// rows are all that is left to read.
    private func resync(_ pull: Pull, on connection: PostgresConnection, into report: inout Report) async throws {
        let through = try await Deadline.run("reading the server's newest change", limit: options.timeout, closing: connection) {
            try await pull.newest(on: connection)
        }
        logger.info("changes this store needs were pruned from the server: reading its current rows (up to change \(through))")
        for table in schema!.tables.values.sorted(by: { $0.entity.uid < $1.entity.uid }) where !table.asymmetric {
            try await refresh(table, filter: pull.filters[table.entity.uid], removals: true, pull: pull, on: connection, into: &report)
        }
        try store.applyIncoming([], through: through)
        pulled = through
        report.resynced = true
    }

    /// Brings the store's objects of `table` in line with the server's rows: reads the rows
    /// (with `filter`, those that meet it, and the removed ones when `removals`) in batches and
    /// applies them; then, with `filter`, lets go of the objects held here whose rows do not
    /// meet it. (Removals matter to a store that missed changes; one whose subscriptions changed
    /// gets those of its objects from its pulls.)
    private func refresh(_ table: ServerSchema.Table, filter: String?, removals: Bool, pull: Pull, on connection: PostgresConnection,
                         into report: inout Report) async throws {
        let (limit, batch, logger) = (options.timeout, options.pullChanges, self.logger)
        var last: UUID?
        while true {
            let after = last
            let rows = try await Deadline.run("reading \(table.qualified)", limit: limit, closing: connection) {
                try await ServerRow.read(after: after, limit: batch, in: table, filter: filter, removals: removals, on: connection, logger: logger)
            }
            guard !rows.isEmpty else { break }
            let changes = try pull.changes(of: rows, in: table)
            note(try store.applyIncoming(changes, through: pulled, removalsWin: options.removals == .win), in: &report)
            last = changes.last!.globalId
        }
        guard let filter else { return }
        let held = try store.heldGlobalIds(entityUid: table.entity.uid)
        for start in stride(from: 0, to: held.count, by: batch) {
            let ids = Array(held[start..<min(start + batch, held.count)])
            let leaving = try await Deadline.run("reading \(table.qualified)", limit: limit, closing: connection) {
                try await ServerRow.notMeeting(filter, among: ids, in: table, on: connection, logger: logger)
            }
            if !leaving.isEmpty { note(try store.applyIncoming([], leaving: [table.entity.uid: leaving], through: pulled), in: &report) }
        }
    }

    /// Brings every table whose subscriptions changed since the last pull in line with them
    /// (``refresh(_:filter:removals:pull:on:into:)``), noting each as it is done; returns the SQL
    /// condition of each table's subscriptions (none for a table that syncs every object).
    private func alignSubscriptions(on connection: PostgresConnection, into report: inout Report) async throws -> [UInt64: String] {
        var filters: [UInt64: String] = [:]
        let pull = Pull(schema: schema!, options: options, device: device!, logger: logger)
        for table in schema!.tables.values.sorted(by: { $0.entity.uid < $1.entity.uid }) where !table.asymmetric {
            let uid = table.entity.uid
            let state = try SubscriptionState.read(store)
            let wanted = state.wanted(uid, bySubscription: options.bySubscription)
            let filter = wanted == "true" ? nil : try SubscriptionSQL.condition(wanted, in: table)
            filters[uid] = filter
            guard state.applied(uid) != wanted else { continue }
            try await refresh(table, filter: filter, removals: false, pull: pull, on: connection, into: &report)
            // Read again: a subscription may have come while this one was read.
            var done = try SubscriptionState.read(store)
            done.applied[String(uid)] = wanted == "true" ? nil : wanted
            try done.write(store)
        }
        return filters
    }

    private func note(_ incoming: IncomingReport, in report: inout Report) {
        report.applied += incoming.applied
        report.left += incoming.left
        report.refused += incoming.refused
        for refusal in incoming.refused { logger.warning("a server value was refused: \(refusal)") }
    }

    /// The last change number this store's pulls were noted at on the server, and when.
    private var notedPulled: (sequence: UInt64, at: ContinuousClock.Instant)?

    /// Notes on the server how far this store has pulled and that it was seen now, when that
    /// moved or a minute passed: pruning keeps every change a device seen within the retention
    /// has not pulled yet.
    private func notePulled(on connection: PostgresConnection) async throws {
        if let notedPulled, notedPulled.sequence == pulled, ContinuousClock.now - notedPulled.at < .seconds(60) { return }
        let ns = SQL.quote(options.schema)
        let (texts, logger) = ([UUIDText.text(device!), String(pulled)], self.logger)
        try await Deadline.run("noting how far this store pulled", limit: options.timeout, closing: connection) {
            try await connection.execute("""
                INSERT INTO \(ns).cellar_devices (device, pulled) VALUES ($1::uuid, $2::bigint) ON CONFLICT (device)
                DO UPDATE SET pulled = greatest(cellar_devices.pulled, EXCLUDED.pulled), seen = now()
                """, texts, logger: logger)
        }
        notedPulled = (pulled, .now)
        if let retention = options.changeRetention, lastPrune.map({ ContinuousClock.now - $0 >= options.pruneInterval }) ?? true {
            lastPrune = .now
            do {
                _ = try await prune(keeping: retention, on: connection)
            } catch where SQL.state(of: error) == "42501" {
                // A device's role without the right to prune (a row-level-security setup grants
                // none): pruning is left to a role that has it, and the sync goes on.
                logger.info("this role may not prune the server's changes (\(SyncError(error, doing: "pruning", password: server.password).message)): an administrator's job prunes them")
            }
        }
    }

    private var lastPrune: ContinuousClock.Instant?

    /// Drops from the server's `cellar_changes` the changes that every device seen within
    /// ``SyncOptions/changeRetention`` has pulled (every device's pull is noted on the server).
    /// A device that comes back after longer, or a new one, reads the current rows instead of
    /// the changes it missed. Sync calls this by itself at most every
    /// ``SyncOptions/pruneInterval``; an app or an administrator's job may call it too.
    /// Returns the number of changes dropped (0 without a retention, or on a server no device has
    /// synced with yet).
    @discardableResult
    public func pruneServer() async throws -> Int {
        guard let retention = options.changeRetention else { return 0 }
        // A connection of its own: the live loop's may be in the middle of a transaction.
        var connection: PostgresConnection?
        do {
            connection = try await newConnection()
            let dropped = try await prune(keeping: retention, on: connection!)
            try? await connection?.close()
            return dropped
        } catch {
            try? await connection?.close()
            throw SyncError(error, doing: "pruning the server's changes", password: server.password)
        }
    }

    private func prune(keeping retention: Duration, on connection: PostgresConnection) async throws -> Int {
        let ns = SQL.quote(options.schema)
        let seconds = String(Double(retention.components.seconds) + Double(retention.components.attoseconds) / 1e18)
        let logger = self.logger
        return try await Deadline.run("pruning the server's changes", limit: options.timeout, closing: connection) {
            try await connection.withTransaction(logger: logger) { connection in
                // A server no device has synced with yet holds no tables: nothing to prune.
                let exists = try await connection.rows("SELECT (to_regclass($1) IS NOT NULL)::text", [ns + ".cellar_pruned"], logger: logger)
                guard exists.first?.first == "true" else { return 0 }
                // One pruner at a time.
                let current = try await connection.rows("SELECT through::text FROM \(ns).cellar_pruned FOR UPDATE", logger: logger)
                let horizon = try await connection.rows("""
                    SELECT min(pulled)::text FROM \(ns).cellar_devices WHERE seen > now() - make_interval(secs => $1::double precision)
                    """, [seconds], logger: logger)
                guard let through = (horizon.first?[0] ?? nil).flatMap({ UInt64($0) }),
                      let pruned = current.compactMap({ $0[0].flatMap { UInt64($0) } }).max(), through > pruned else { return 0 }
                // The horizon moves first: a pull that reads it after this commits reads the
                // current rows, whatever changes it misses.
                try await connection.execute("UPDATE \(ns).cellar_pruned SET through = $1::bigint", [String(through)], logger: logger)
                let dropped = try await connection.rows("""
                    WITH dropped AS (DELETE FROM \(ns).cellar_changes WHERE seq <= $1::bigint RETURNING 1) SELECT count(*)::text FROM dropped
                    """, [String(through)], logger: logger)
                return (dropped.first?[0] ?? nil).flatMap { Int($0) } ?? 0
            }
        }
    }
}
