@_spi(Sync) import Cellar
import Foundation

/// A query whose objects a device syncs (see ``SyncClient/subscribe(_:name:)``): with
/// ``SyncOptions/bySubscription`` set, a device holds the objects that match one of its
/// subscriptions, and no others.
public struct Subscription: Sendable, Hashable, Codable {
    /// The name it was given; nil for one known by its query alone.
    public let name: String?
    /// The entity's name (when subscribed).
    public let entity: String
    /// The entity's UID.
    public let entityUid: UInt64
    /// The query's condition as the server evaluates it: SQL on the entity's table, with
    /// `{<uid>}` standing for the column of the property with that UID (columns are renamed
    /// with their properties; UIDs stay).
    public let condition: String
}

/// The subscriptions a store keeps (its replica setting `subscriptions`, JSON), and the
/// condition each table was last brought in line with: a table whose condition changed is
/// read again (objects that now match arrive, those that no longer match leave).
struct SubscriptionState: Codable, Equatable {
    static let setting = "subscriptions"

    var subscriptions: [Subscription] = []
    /// By entity UID (as text): the condition the store's objects of that table were last
    /// brought in line with. Missing: every object (the store synced without subscriptions).
    var applied: [String: String] = [:]

    static func read(_ store: Store) throws -> SubscriptionState {
        guard let bytes = try store.replicaSetting(setting) else { return SubscriptionState() }
        do {
            return try JSONDecoder().decode(SubscriptionState.self, from: Data(bytes))
        } catch {
            throw SyncError(.schema, "the store's sync subscriptions cannot be read: \(error)")
        }
    }

    func write(_ store: Store) throws {
        try store.setReplicaSetting(Self.setting, to: Array(try JSONEncoder().encode(self)))
    }

    /// The condition the objects of `table` should meet, as a template (see
    /// ``Subscription/condition``): `true` without subscriptions (every object), else the
    /// conditions of the table's subscriptions, any of them (`false` when it has none).
    func wanted(_ entityUid: UInt64, bySubscription: Bool) -> String {
        guard bySubscription else { return "true" }
        let conditions = Set(subscriptions.filter { $0.entityUid == entityUid }.map(\.condition)).sorted()
        switch conditions.count {
        case 0: return "false"
        case 1: return conditions[0]
        default: return "(" + conditions.joined(separator: " OR ") + ")"
        }
    }

    /// The condition `table`'s objects were last brought in line with.
    func applied(_ entityUid: UInt64) -> String { applied[String(entityUid)] ?? "true" }
}

/// Translates a query's ``ReplicaFilter`` into an SQL condition template (see
/// ``Subscription/condition``) that evaluates as the store's query does:
///
/// - a comparison with NULL (a nil value) is false, except `isNil` (each comparison is
///   `coalesce(…, false)`, so that `NOT` of a whole condition is its opposite);
/// - strings compare by their bytes (`COLLATE "C"`), floating-point numbers as `double
///   precision`, UUIDs and bytes byte by byte, dates as their stored integers;
/// - values are literals the server cannot misread: numbers, UUIDs and hexadecimal as they
///   are, any other text through `convert_from(decode('<hex>', 'hex'), 'UTF8')`.
enum SubscriptionSQL {
    static func template(_ filter: ReplicaFilter?, entity: ReplicaSchema.Entity) throws -> String {
        guard let filter else { return "true" }
        switch filter {
        case .all(let filters):
            return filters.isEmpty ? "true" : "(" + (try filters.map { try template($0, entity: entity) }).joined(separator: " AND ") + ")"
        case .any(let filters):
            return filters.isEmpty ? "false" : "(" + (try filters.map { try template($0, entity: entity) }).joined(separator: " OR ") + ")"
        case .compare(let uid, let operation, let values):
            guard let property = entity.properties.first(where: { $0.uid == uid }) else {
                throw SyncError(.invalidArgument, "a subscription on \(entity.name) names a property (UID \(uid)) the sync schema lacks")
            }
            return "coalesce(" + comparison("{\(uid)}", property.column, operation, values) + ", false)"
        }
    }

    private static func comparison(_ column: String, _ type: ReplicaSchema.ColumnType, _ operation: ReplicaFilter.Operation,
                                   _ values: [ReplicaValue]) -> String {
        let ordered = type == .text ? column + " COLLATE \"C\"" : column
        let literals = values.map { literal($0, type) }
        switch operation {
        case .equal: return "\(column) = \(literals[0])"
        case .notEqual: return "\(column) <> \(literals[0])"
        case .less: return "\(ordered) < \(literals[0])"
        case .lessOrEqual: return "\(ordered) <= \(literals[0])"
        case .greater: return "\(ordered) > \(literals[0])"
        case .greaterOrEqual: return "\(ordered) >= \(literals[0])"
        case .between: return "(\(ordered) >= \(literals[0]) AND \(ordered) <= \(literals[1]))"
        case .isIn: return literals.isEmpty ? "false" : "\(column) IN (\(literals.joined(separator: ", ")))"
        case .isNotIn: return literals.isEmpty ? "\(column) IS NOT NULL" : "\(column) NOT IN (\(literals.joined(separator: ", ")))"
        case .isNil: return "\(column) IS NULL"
        case .isNotNil: return "\(column) IS NOT NULL"
        case .startsWith: return "starts_with(\(column), \(literals[0]))"
        case .endsWith: return "right(\(column), length(\(literals[0]))) = \(literals[0])"
        case .contains: return "strpos(\(column), \(literals[0])) > 0"
        }
    }

    /// `value` as an SQL literal of the column's type (floating-point numbers as `double
    /// precision`: a `real` column compares as the store compares a `Float`, widened).
    private static func literal(_ value: ReplicaValue, _ type: ReplicaSchema.ColumnType) -> String {
        let text = ColumnText.text(value) ?? ""
        let plain = !text.isEmpty && text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
        }
        let quoted = plain ? "'\(text)'" : "convert_from(decode('\(ColumnText.hex(Array(text.utf8)))', 'hex'), 'UTF8')"
        return "(" + ColumnText.cast(quoted, type == .real ? .doublePrecision : type) + ")"
    }

    /// `template` with each `{<uid>}` replaced by `cellar_row.` and the column of that UID in
    /// `table`.
    static func condition(_ template: String, in table: ServerSchema.Table) throws -> String {
        var result = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}"), let uid = UInt64(rest[rest.index(after: open)..<close]),
                  let column = table.columns[uid] else {
                throw SyncError(.schema, "a subscription's condition on \(table.qualified) names a column this model lacks")
            }
            result += "cellar_row." + column
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }
}
