@_spi(CellarGenerated) @_spi(Testing) import Cellar
import Foundation

/// A model entity for `Row`: each test declares one per version of its schema.
public protocol RowSchema {
    static var entity: ModelEntity { get }
}

/// A value of a `Row` property.
public enum RowValue: Equatable, Sendable {
    case long(Int64)
    case string(String)
    case double(Double)
}

/// An entity whose properties come from a `RowSchema`: lets schema-evolution tests write several
/// versions of one entity (same UID, different properties) without a binding each.
public final class Row<S: RowSchema>: Entity, EntityInspectable {
    public var id: Id = 0
    public var values: [String: RowValue] = [:]

    public init(id: Id = 0, _ values: [String: RowValue] = [:]) {
        self.id = id
        self.values = values
    }

    public static var entityBinding: RowBinding<S> { RowBinding() }
}

public struct RowBinding<S: RowSchema>: EntityBinding {
    public typealias EntityType = Row<S>
    public init() {}
    public var entityName: String { S.entity.name }
    public var entityId: IdUid { S.entity.id }
    public var slotCount: Int { Int(S.entity.lastPropertyId.id) }
    public func id(of entity: Row<S>) -> Id { entity.id }
    public func setId(_ id: Id, of entity: inout Row<S>) { entity.id = id }

    public func write(_ entity: Row<S>, to record: RecordBuilder) throws {
        for property in S.entity.properties where !property.flags.contains(.id) {
            let slot = Int(property.id.id) - 1
            switch entity.values[property.name] {
            case .long(let v)?: record.add(v, slot: slot)
            case .string(let v)?: record.add(v, slot: slot)
            case .double(let v)?: record.add(v, slot: slot)
            case nil: break
            }
        }
    }

    public func read(id: Id, from record: RecordReader) throws -> Row<S> {
        let row = Row<S>(id: id)
        for property in S.entity.properties where !property.flags.contains(.id) {
            let slot = Int(property.id.id) - 1
            switch property.type {
            case .long: row.values[property.name] = try record.read(Int64.self, slot: slot).map { .long($0) }
            case .string: row.values[property.name] = try record.string(slot: slot).map { .string($0) }
            case .double: row.values[property.name] = try record.double(slot: slot).map { .double($0) }
            default: fatalError("Row supports Long, String and Double")
            }
        }
        return row
    }
}
