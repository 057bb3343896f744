@_spi(CellarGenerated) import Cellar
import EmbeddedFuzzModel

/// The seeds of corpus/embedded: byte 0 picks FuzzEmbedded's mode (0…6: a record of that type of
/// `FuzzModel`, 7: the structured mode), the rest is a record written by the bindings (or, for
/// the structured mode, bytes that drive the making of objects).
func embeddedSeeds() throws -> [(name: String, bytes: [UInt8])] {
    func record(_ mode: UInt8, slotCount: Int, _ write: (RecordBuilder) throws -> Void) throws -> [UInt8] {
        let builder = RecordBuilder()
        builder.begin(slotCount: slotCount)
        try write(builder)
        return [mode] + Array(builder.bytes)
    }
    func entity<E: EntityInspectable>(_ mode: UInt8, _ value: E) throws -> [UInt8] {
        try record(mode, slotCount: E.entityBinding.slotCount) { try E.entityBinding.write(value, to: $0) }
    }
    func embedded<T: EmbeddedInspectable>(_ mode: UInt8, _ value: T) throws -> [UInt8] {
        try record(mode, slotCount: T.embeddedBinding.slotCount) { try T.embeddedBinding.write(value, to: $0) }
    }
    /// A chain of `count` nodes, each the next one's parent.
    func chain(_ count: Int) -> Node {
        let root = Node(label: "n0", value: 0)
        var last = root
        for level in 1..<count {
            let next = Node(label: "n\(level)", value: level)
            last.child = next
            last = next
        }
        return root
    }

    let home = Address(city: "Rome", zip: "00184", tags: ["a", "日本"], geo: Geo(lat: 41.9, lon: 12.5))
    let tree = Node(label: "root", value: 1, child: Node(label: "only", value: 2),
                    children: [Node(label: "a", value: 3, children: [Node(label: "a1", value: 4)]), Node(label: "b", value: -5)])
    var seeds: [(name: String, bytes: [UInt8])] = [
        ("contact-full", try entity(0, Contact("Ada", home: home, work: Address()))),
        ("contact-bare", try entity(0, Contact("Bob"))),
        ("order-lines", try entity(1, Order(7, [Line(sku: "A-1", quantity: 2), Line(sku: "A-2", quantity: -1, shipTo: home),
                                                Line(sku: "", quantity: Int.max)]))),
        ("order-empty", try entity(1, Order(8, []))),
        ("address", try embedded(2, home)),
        ("geo", try embedded(3, Geo(lat: .nan, lon: -0.0))),
        ("line", try embedded(4, Line(sku: "é", quantity: 3, shipTo: Address(city: "Oslo")))),
        ("outline-tree", try entity(5, Outline("tree", root: tree))),
        // The deepest values allowed: 64 levels of embedded objects below the outermost record.
        ("outline-deep-64", try entity(5, Outline("deep", root: chain(Model.maxEmbeddingDepth)))),
        ("node-deep-65", try embedded(6, chain(Model.maxEmbeddingDepth + 1))),
        ("structured-small", [7, 3, 1, 2, 60, 5, 9, 2, 1, 4, 8, 0, 3, 6, 200, 17, 2, 2, 1, 1, 10, 3, 9]),
        ("structured-deep", [7, 1, 3, 1, 0, 2, 3, 1, 4, 5, 99, 7, 40, 2, 3, 1, 9, 9, 9, 1, 2, 3, 4, 5, 6, 7, 8]),
    ]
    // One level too deep: a node record of 65 levels put in an outline's root slot by hand (the
    // builder refuses to write it).
    let deepNode = try embedded(6, chain(Model.maxEmbeddingDepth + 1)).dropFirst()
    seeds.append(("invalid-outline-deep-65", try record(5, slotCount: Outline.entityBinding.slotCount) { builder in
        builder.add("too deep", slot: 1)
        Array(deepNode).withUnsafeBytes { builder.add(bytes: $0, slot: 2) }
    }))
    return seeds
}
