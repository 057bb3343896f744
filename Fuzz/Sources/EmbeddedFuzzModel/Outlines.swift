@_spi(CellarGenerated) import Cellar

// A recursive embedded type: a node holds an optional child and a list of children of its own
// type, so that values reach (and pass) `Model.maxEmbeddingDepth`.

/// A node of an outline: a label, a value, one optional child and a list of children.
public final class Node: EmbeddedInspectable, Equatable {
    public var label = ""
    public var value = 0
    public var child: Node?
    public var children: [Node] = []
    public init(label: String = "", value: Int = 0, child: Node? = nil, children: [Node] = []) {
        self.label = label; self.value = value; self.child = child; self.children = children
    }
    public static let embeddedBinding = NodeBinding()
    public static let label = Property<Node>(name: "label", id: 1, type: .string)
    public static let value = Property<Node>(name: "value", id: 2, type: .long)
    public static let child = EmbeddedProperty<Node, Node>(name: "child", id: 3, type: .embedded)
    public static let children = EmbeddedProperty<Node, Node>(name: "children", id: 4, type: .embeddedList)

    /// Strings compared by their UTF-8 bytes, children compared in order.
    public static func == (a: Node, b: Node) -> Bool {
        a.label.utf8.elementsEqual(b.label.utf8) && a.value == b.value && a.child == b.child && a.children == b.children
    }

    /// The levels of embedded objects this node makes: 1 for a node without child and children.
    public var depth: Int {
        1 + max(child?.depth ?? 0, children.map(\.depth).max() ?? 0)
    }
}

public struct NodeBinding: EmbeddedBinding {
    public typealias EmbeddedType = Node
    public var typeName: String { "Node" }
    public var typeId: IdUid { IdUid(id: 7, uid: 9_700) }
    public var slotCount: Int { 4 }
    public func write(_ value: Node, to record: RecordBuilder) throws {
        record.add(value.label, slot: 0)
        record.add(value.value, slot: 1)
        try record.add(embedded: value.child, slot: 2)
        try record.add(embeddedList: value.children, slot: 3)
    }
    public func read(from record: RecordReader) throws -> Node {
        Node(label: try record.string(slot: 0) ?? "", value: try record.read(Int.self, slot: 1) ?? 0,
             child: try record.embedded(Node.self, slot: 2), children: try record.embeddedList(Node.self, slot: 3) ?? [])
    }
}

extension EmbeddedProperty where T == Node {
    public var label: Property<E> { self[Node.label] }
    public var value: Property<E> { self[Node.value] }
    public var child: EmbeddedProperty<E, Node> { self[Node.child] }
    public var children: EmbeddedProperty<E, Node> { self[Node.children] }
}

/// An outline: a title and an optional root node.
public final class Outline: Entity, EntityInspectable {
    public var id: Id = 0
    public var title = ""
    public var root: Node?
    public init() {}
    public init(_ title: String, root: Node?) { self.title = title; self.root = root }
    public static let entityBinding = OutlineBinding()
    public static let title = Property<Outline>(name: "title", id: 2, type: .string)
    public static let root = EmbeddedProperty<Outline, Node>(name: "root", id: 3, type: .embedded)

    /// Whether both hold the same values (the id aside).
    public func sameValues(as other: Outline) -> Bool { title.utf8.elementsEqual(other.title.utf8) && root == other.root }
}

public struct OutlineBinding: EntityBinding {
    public typealias EntityType = Outline
    public var entityName: String { "Outline" }
    public var entityId: IdUid { IdUid(id: 6, uid: 9_600) }
    public var slotCount: Int { 3 }
    public func id(of entity: Outline) -> Id { entity.id }
    public func setId(_ id: Id, of entity: inout Outline) { entity.id = id }
    public func write(_ entity: Outline, to record: RecordBuilder) throws {
        record.add(entity.title, slot: 1)
        try record.add(embedded: entity.root, slot: 2)
    }
    public func read(id: Id, from record: RecordReader) throws -> Outline {
        let outline = Outline()
        outline.id = id
        outline.title = try record.string(slot: 1) ?? ""
        outline.root = try record.embedded(Node.self, slot: 2)
        return outline
    }
}
