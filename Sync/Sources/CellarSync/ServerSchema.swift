@_spi(Sync) import Cellar
import Foundation
import Logging
import PostgresNIO

/// The tables on the server, derived from the store's model (see the sync documentation):
///
/// - one table per entity, named as the entity, with `cellar_id` (the object's global id, the
///   primary key), `cellar_removed` (the removal's clock; NULL while the object is there),
///   `cellar_clocks` (each property's and relation's last clock, a `text[]` indexed by the
///   column's slot), `cellar_owner` (the role that pushed the row first: for row-level
///   security), then a column per property and a `uuid[]` column per to-many relation;
/// - `cellar_tables` and `cellar_columns`: which UID each table and column stands for, so that a
///   rename in the model renames the table or column, and each column's slot in `cellar_clocks`
///   (from 1, in the order the columns were added: it never changes);
/// - `cellar_changes`: one row per pushed object change, numbered by a global sequence that pulls
///   read from;
/// - `cellar_devices`: the last history sequence each device pushed (what makes pushes
///   idempotent) and that entry's timestamp (what tells a store restored from an older copy),
///   the last change number it pulled, and when it was last seen;
/// - `cellar_pruned`: one row, the change number up to which `cellar_changes` may have been
///   pruned (a device that pulled less than that reads the current rows instead), and the
///   server's `format` (see ``format``).
///
/// The client creates and migrates them (``migrate(_:on:logger:)``), under an advisory lock so
/// that devices starting together do it once.
struct ServerSchema: Sendable {
    /// An entity's table.
    struct Table: Sendable {
        let entity: ReplicaSchema.Entity
        /// `schema."Name"`.
        let qualified: String
        let asymmetric: Bool
        /// Column names, quoted, by property or relation UID.
        let columns: [UInt64: String]
        /// Each of `uids`' slot in `cellar_clocks` (from 1).
        let slots: [Int]
        /// The UIDs of the row's value columns, in the order a `ServerRow` holds them: the
        /// entity's properties, then its relations.
        let uids: [UInt64]
        /// The position in `uids` of each UID.
        let positions: [UInt64: Int]
        /// The column type of each of `uids`.
        let types: [ReplicaSchema.ColumnType]
        /// The value columns, quoted, in `uids`' order.
        let valueColumns: [String]
        /// All the row's columns, quoted, as a `ServerRow` holds them: `cellar_id`,
        /// `cellar_removed`, `cellar_clocks`, then `valueColumns`.
        var rowColumns: [String] { ["cellar_id", "cellar_removed", "cellar_clocks"] + valueColumns }
        /// The position in `uids` of the column in each slot, from slot 1 to the last of them
        /// (nil: a slot of a column this model does not have).
        let slotted: [Int?]

        /// `slots`: each property's and relation's slot by UID (all of `columns`' UIDs).
        init(entity: ReplicaSchema.Entity, qualified: String, asymmetric: Bool, columns: [UInt64: String], slots: [UInt64: Int]) {
            self.entity = entity
            self.qualified = qualified
            self.asymmetric = asymmetric
            self.columns = columns
            uids = entity.properties.map(\.uid) + entity.relations.map(\.uid)
            positions = Dictionary(uniqueKeysWithValues: uids.enumerated().map { ($0.element, $0.offset) })
            types = entity.properties.map(\.column) + entity.relations.map { _ in .uuidArray }
            valueColumns = uids.map { columns[$0]! }
            self.slots = uids.map { slots[$0]! }
            var slotted = [Int?](repeating: nil, count: self.slots.max() ?? 0)
            for (position, slot) in self.slots.enumerated() { slotted[slot - 1] = position }
            self.slotted = slotted
        }

        /// `cellar_row.cellar_clocks[<slot>]`: the clock of the column at `position` in the row
        /// `cellar_row` (NULL: none).
        func clock(at position: Int, of row: String = "cellar_row") -> String {
            "\(row).cellar_clocks[\(slots[position])]"
        }
    }

    /// The layout of the server's tables this build makes and reads, kept in
    /// `cellar_pruned.format`: 2 since the clocks are kept in slots. Servers made by earlier
    /// builds have no format and are moved on connect; a server whose format is higher was made
    /// or moved by a later build, and this one refuses it (a `schema` error) rather than write
    /// what that build would misread.
    static let format = 2

    let namespace: String
    let tables: [UInt64: Table]
    /// The NOTIFY channel pushes signal on.
    var channel: String { "cellar_changes_" + namespace }

    func table(_ name: String) -> String { SQL.quote(namespace) + "." + SQL.quote(name) }

    /// Creates what is missing on the server for `schema`, renames what was renamed, adds new
    /// columns; throws `schema` for a property whose type differs from the server's column, or a
    /// name taken on the server by another UID.
    static func migrate(_ replica: ReplicaSchema, options: SyncOptions, on connection: PostgresConnection,
                        logger: Logger) async throws -> ServerSchema {
        let ns = SQL.quote(options.schema)
        let names = Self(namespace: options.schema, tables: [:])
        return try await connection.withTransaction(logger: logger) { connection in
            try await connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", ["cellar-schema:" + options.schema], logger: logger)
            // The bookkeeping tables, unless they are there: a device's role may lack the right to
            // create anything (a row-level-security setup), and CREATE … IF NOT EXISTS checks that
            // right before it looks.
            let bookkeeping = ["cellar_tables", "cellar_columns", "cellar_changes", "cellar_devices", "cellar_pruned"].map { ns + "." + $0 }
            // (A server made before changes were pruned lacks cellar_pruned and the devices'
            // `pulled`; one made before restored stores were recognised lacks `acknowledged_at`;
            // one made before the clocks' slots lacks the columns' `slot`: they are added then,
            // the slots numbered in the order of the columns' UIDs.)
            // (With whether `cellar_pruned` has the server's format, read before anything is
            // changed: a server a later build moved must not be touched.)
            let present = try await connection.rows("""
                SELECT (to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AND to_regclass($3) IS NOT NULL
                    AND to_regclass($5) IS NOT NULL AND (SELECT count(*) FROM pg_attribute
                        WHERE attrelid = to_regclass($4) AND attname IN ('pulled', 'acknowledged_at') AND NOT attisdropped) = 2
                    AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($2) AND attname = 'slot' AND NOT attisdropped))::text,
                    EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($5) AND attname = 'format' AND NOT attisdropped)::text
                """, bookkeeping, logger: logger)
            let hasFormat = present.first?[1] == "true"
            var format: Int?
            if hasFormat {
                format = try await connection.rows("SELECT max(format)::text FROM \(ns).cellar_pruned", logger: logger).first?[0].flatMap { Int($0) }
                if let format, format > Self.format {
                    throw SyncError(.schema, "the server's tables are in format \(format), which a later build of Cellar made; this build reads format \(Self.format): upgrade it")
                }
            }
            if present.first?[0] != "true" || !hasFormat {
                // (Made only when missing: the schema's owner, adding what a newer build needs,
                // may lack the right to create schemas that IF NOT EXISTS checks first.)
                let schemaThere = try await connection.rows("SELECT (to_regnamespace($1) IS NOT NULL)::text", [ns], logger: logger)
                if schemaThere.first?.first != "true" {
                    try await connection.execute("CREATE SCHEMA \(ns)", logger: logger)
                }
                try await connection.execute("""
                    CREATE TABLE IF NOT EXISTS \(ns).cellar_tables (
                        uid numeric(20,0) PRIMARY KEY, name text NOT NULL UNIQUE, old_names text[] NOT NULL DEFAULT '{}',
                        insert_only boolean NOT NULL DEFAULT false)
                    """, logger: logger)
                try await connection.execute("""
                    CREATE TABLE IF NOT EXISTS \(ns).cellar_columns (
                        table_uid numeric(20,0) NOT NULL, uid numeric(20,0) NOT NULL, name text NOT NULL, type text NOT NULL,
                        old_names text[] NOT NULL DEFAULT '{}',
                        PRIMARY KEY (table_uid, uid), UNIQUE (table_uid, name))
                    """, logger: logger)
                try await connection.execute("""
                    CREATE TABLE IF NOT EXISTS \(ns).cellar_changes (
                        seq bigserial PRIMARY KEY, table_uid numeric(20,0) NOT NULL, cellar_id uuid NOT NULL,
                        device uuid NOT NULL, at timestamptz NOT NULL DEFAULT now())
                    """, logger: logger)
                try await connection.execute("""
                    CREATE TABLE IF NOT EXISTS \(ns).cellar_devices (
                        device uuid PRIMARY KEY, acknowledged bigint NOT NULL DEFAULT 0, seen timestamptz NOT NULL DEFAULT now())
                    """, logger: logger)
                try await connection.execute("ALTER TABLE \(ns).cellar_devices ADD COLUMN IF NOT EXISTS pulled bigint NOT NULL DEFAULT 0", logger: logger)
                try await connection.execute("ALTER TABLE \(ns).cellar_devices ADD COLUMN IF NOT EXISTS acknowledged_at bigint", logger: logger)
                try await connection.execute("ALTER TABLE \(ns).cellar_columns ADD COLUMN IF NOT EXISTS slot integer", logger: logger)
                try await connection.execute("""
                    UPDATE \(ns).cellar_columns AS c SET slot = n.slot
                    FROM (SELECT table_uid, uid, row_number() OVER (PARTITION BY table_uid ORDER BY uid) AS slot FROM \(ns).cellar_columns) AS n
                    WHERE c.slot IS NULL AND c.table_uid = n.table_uid AND c.uid = n.uid
                    """, logger: logger)
                try await connection.execute("CREATE TABLE IF NOT EXISTS \(ns).cellar_pruned (through bigint NOT NULL)", logger: logger)
                try await connection.execute("ALTER TABLE \(ns).cellar_pruned ADD COLUMN IF NOT EXISTS format integer", logger: logger)
                try await connection.execute("INSERT INTO \(ns).cellar_pruned (through) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM \(ns).cellar_pruned)", logger: logger)
            }
            var tables: [UInt64: Table] = [:]
            for entity in replica.entities {
                let asymmetric = entity.asymmetric || options.asymmetric.contains(entity.name)
                // (With whether the table still keeps its clocks in the older builds' document.)
                let known = try await connection.rows("""
                    SELECT name, old_names::text, EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(quote_ident($2) || '.' || quote_ident(name))
                        AND attname = 'cellar_clock' AND NOT attisdropped)::text
                    FROM \(ns).cellar_tables WHERE uid = $1::numeric
                    """, [String(entity.uid), options.schema], logger: logger)
                var tableName = entity.name
                if let row = known.first, let current = row[0] {
                    // A model from before a rename keeps the server's newer name.
                    if current != entity.name, Self.names(row[1]).contains(entity.name) {
                        tableName = current
                    } else if current != entity.name {
                        try await connection.execute("ALTER TABLE \(names.table(current)) RENAME TO \(SQL.quote(entity.name))", logger: logger)
                        try await connection.execute("UPDATE \(ns).cellar_tables SET name = $2, old_names = array_append(old_names, $3) WHERE uid = $1::numeric",
                                                     [String(entity.uid), entity.name, current], logger: logger)
                    }
                } else {
                    let taken = try await connection.rows("SELECT uid::text FROM \(ns).cellar_tables WHERE name = $1", [entity.name], logger: logger)
                    if let other = taken.first?[0] {
                        throw SyncError(.schema, "the server's table \(entity.name) belongs to the entity with UID \(other), not to this model's \(entity.name) (UID \(entity.uid))")
                    }
                    try await connection.execute("""
                        CREATE TABLE \(names.table(entity.name)) (
                            cellar_id uuid PRIMARY KEY, cellar_removed text, cellar_clocks text[] NOT NULL DEFAULT '{}',
                            cellar_owner text NOT NULL DEFAULT current_user)
                        """, logger: logger)
                    try await connection.execute("INSERT INTO \(ns).cellar_tables (uid, name, insert_only) VALUES ($1::numeric, $2, $3::boolean)",
                                                 [String(entity.uid), entity.name, asymmetric ? "true" : "false"], logger: logger)
                }
                let existing = try await connection.rows("SELECT uid::text, name, type, old_names::text, slot::text FROM \(ns).cellar_columns WHERE table_uid = $1::numeric",
                                                         [String(entity.uid)], logger: logger)
                var byUid: [UInt64: (name: String, type: String, old: [String], slot: Int)] = [:]
                for row in existing {
                    if let uid = row[0].flatMap({ UInt64($0) }), let name = row[1], let type = row[2], let slot = row[4].flatMap({ Int($0) }) {
                        byUid[uid] = (name, type, Self.names(row[3]), slot)
                    }
                }
                if known.first?[2] == "true" {
                    try await clocksInSlots(names.table(tableName), slots: byUid.mapValues(\.slot), on: connection, logger: logger)
                }
                var nextSlot = (byUid.values.map(\.slot).max() ?? 0) + 1
                var slots: [UInt64: Int] = [:]
                let wanted = entity.properties.map { ($0.uid, $0.name, $0.column.rawValue) }
                    + entity.relations.map { ($0.uid, $0.name, ReplicaSchema.ColumnType.uuidArray.rawValue) }
                var columns: [UInt64: String] = [:]
                for (uid, name, type) in wanted {
                    if name.hasPrefix("cellar_") {
                        throw SyncError(.schema, "\(entity.name).\(name): names starting with cellar_ are the sync columns' own")
                    }
                    if let column = byUid[uid] {
                        guard column.type == type else {
                            throw SyncError(.schema, "\(entity.name).\(name) is \(type) in this model but \(column.type) on the server: a property's type cannot change")
                        }
                        slots[uid] = column.slot
                        if column.name != name, column.old.contains(name) {
                            // A model from before a rename: the server's newer name stays.
                            columns[uid] = SQL.quote(column.name)
                            continue
                        }
                        if column.name != name {
                            try await connection.execute("ALTER TABLE \(names.table(tableName)) RENAME COLUMN \(SQL.quote(column.name)) TO \(SQL.quote(name))", logger: logger)
                            try await connection.execute("UPDATE \(ns).cellar_columns SET name = $3, old_names = array_append(old_names, $4) WHERE table_uid = $1::numeric AND uid = $2::numeric",
                                                         [String(entity.uid), String(uid), name, column.name], logger: logger)
                        }
                    } else {
                        if let other = byUid.first(where: { $0.value.name == name }) {
                            throw SyncError(.schema, "the server's column \(entity.name).\(name) belongs to the property with UID \(other.key), not to UID \(uid)")
                        }
                        try await connection.execute("ALTER TABLE \(names.table(tableName)) ADD COLUMN \(SQL.quote(name)) \(type)", logger: logger)
                        try await connection.execute("INSERT INTO \(ns).cellar_columns (table_uid, uid, name, type, slot) VALUES ($1::numeric, $2::numeric, $3, $4, $5::integer)",
                                                     [String(entity.uid), String(uid), name, type, String(nextSlot)], logger: logger)
                        slots[uid] = nextSlot
                        nextSlot += 1
                    }
                    columns[uid] = SQL.quote(name)
                }
                tables[entity.uid] = Table(entity: entity, qualified: names.table(tableName), asymmetric: asymmetric, columns: columns, slots: slots)
            }
            // Once everything is moved: the server is in this build's format.
            if format != Self.format {
                try await connection.execute("UPDATE \(ns).cellar_pruned SET format = $1::integer", [String(Self.format)], logger: logger)
            }
            return ServerSchema(namespace: options.schema, tables: tables)
        }
    }

    /// Moves the clocks of `table` (qualified) from the `jsonb` document `cellar_clock` of
    /// servers made before the slots (`{"<uid>": "<clock>", …}`) into `cellar_clocks`, each at
    /// its column's slot (`slots`, by UID), and drops the document. A member that is not a
    /// string (which no device wrote), one of a UID that has no column, and a document that is
    /// not an object are left out: no clock. The clocks, and the removals' in `cellar_removed`,
    /// are rewritten from the older builds' text to `ReplicaClock.text` (`orderedClock`). Throws
    /// `schema`, moving nothing, when row-level security applies to this role on the table.
    private static func clocksInSlots(_ table: String, slots: [UInt64: Int], on connection: PostgresConnection, logger: Logger) async throws {
        var elements = [String](repeating: "NULL", count: slots.values.max() ?? 0)
        for (uid, slot) in slots {
            elements[slot - 1] = "CASE WHEN jsonb_typeof(cellar_clock->'\(uid)') = 'string' THEN \(orderedClock("cellar_clock->>'\(uid)'")) END"
        }
        try await connection.execute("ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS cellar_clocks text[] NOT NULL DEFAULT '{}'", logger: logger)
        // Every row must move: under row-level security that applies to this role (policies
        // forced on the tables' owner), the updates would move the rows the policies let through
        // and the drop lose the others' clocks. With `row_security` off such a statement fails
        // instead, and the transaction with it.
        try await connection.execute("SET LOCAL row_security = off", logger: logger)
        do {
            try await connection.execute("""
                UPDATE \(table) SET cellar_clocks = ARRAY[\(elements.joined(separator: ", "))]::text[] WHERE jsonb_typeof(cellar_clock) = 'object'
                """, logger: logger)
            try await connection.execute("UPDATE \(table) SET cellar_removed = \(orderedClock("cellar_removed")) WHERE cellar_removed IS NOT NULL",
                                         logger: logger)
        } catch let error as PSQLError where SQL.state(of: error) == "42501" {
            throw SyncError(.schema, "moving the clocks of \(table) into slots must rewrite every row, and row-level security applies to this role there "
                + "(\(SyncError.describe(error))): connect once as a role it does not apply to (the owner without FORCE ROW LEVEL SECURITY, or one with BYPASSRLS)")
        }
        try await connection.execute("SET LOCAL row_security = on", logger: logger)
        try await connection.execute("ALTER TABLE \(table) DROP COLUMN cellar_clock", logger: logger)
    }

    /// SQL for the clock of the `text` `expression` in the text of `ReplicaClock.text`, from the
    /// text of earlier builds (`ReplicaClock.description`: 16 hexadecimal digits, `-`, a UUID):
    /// the same 24 bytes, in base64 with the alphabet put in order. Any other text (the empty
    /// one of a value pushed without a clock) stays as it is.
    static func orderedClock(_ expression: String) -> String {
        "(SELECT CASE WHEN old ~* '^[0-9a-f]{16}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN "
            + "translate(encode(decode(substr(old, 1, 16) || replace(substr(old, 18), '-', ''), 'hex'), 'base64'), "
            + "'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', "
            + "'-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz') ELSE old END FROM (SELECT \(expression) AS old) AS clock)"
    }

    /// The names of a `text[]` printed as text (`{a,b}`; names are identifiers, never quoted).
    private static func names(_ text: String?) -> [String] {
        guard let text, text.count > 2 else { return [] }
        return text.dropFirst().dropLast().split(separator: ",").map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
    }
}
