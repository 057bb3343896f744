@_spi(CellarGenerated) @_spi(Testing) import Cellar
@testable import CellarGenerator
import CellarTestSupport
import Testing

// The code written for embedded types and for the properties holding them (the CellarTests
// target compiles and runs the code generated for Generated/GeneratedEntities.swift; these check
// the shapes it does not have).

private func emit(_ source: String, isPublic: Bool = false) throws -> String {
    let entities = try SourceScanner.scan(files: [(path: "M.swift", contents: source)])
    var random = SplitMix64(seed: 3)
    let model = try ModelUpdate(modelPath: "model.json").update(nil, with: entities, using: &random)
    return try CodeEmitter(targetName: "App", isPublic: isPublic).emit(entities: entities, model: model)
}

@Suite struct EmbeddedEmitterTests {
    @Test func publicBindingsMembersAndReservedNames() throws {
        let code = try emit("""
        public struct Box: Entity {
            public var id: Id = 0
            public var meta = Meta()
        }
        // cellar: embedded
        public struct Meta {
            public var count = 0
            public var name = ""
            // cellar: name = "label"
            public var title = ""
            public var inner: Inner?
        }
        // cellar: embedded
        public final class Inner {
            public init() {}
        }
        """, isPublic: true)
        #expect(code.contains("extension Meta: Cellar.EmbeddedInspectable {\n    public static let embeddedBinding = MetaCellarBinding()\n}"))
        #expect(code.contains("public struct MetaCellarBinding: Cellar.EmbeddedBinding {\n    public typealias EmbeddedType = Meta"))
        #expect(code.contains("    public var typeName: String { \"Meta\" }\n    public var typeId: Cellar.IdUid { Cellar.IdUid(id: 2, uid: "))
        #expect(code.contains("    public var slotCount: Int { 4 }"))
        #expect(code.contains("        record.add(value.title, slot: 2)\n        try record.add(embedded: value.inner, slot: 3)"))
        #expect(code.contains("        return Meta(\n            count: try record.read(Int.self, slot: 0) ?? 0,"))
        #expect(code.contains("            inner: try record.embedded(Inner.self, slot: 3)\n        )"))
        // The owner: a non-optional object reads its initial value when absent.
        #expect(code.contains("        try record.add(embedded: entity.meta, slot: 1)"))
        #expect(code.contains("            meta: try record.embedded(Meta.self, slot: 1) ?? Meta()"))
        #expect(code.contains("    public static let meta = Cellar.EmbeddedProperty<Box, Meta>(name: \"meta\", id: 2, type: Cellar.PropertyType(rawValue: 101))"))
        #expect(code.contains("    public static let title = Cellar.Property<Meta>(name: \"label\", id: 3, type: Cellar.PropertyType(rawValue: 9))"))
        // `count` and `name` are EmbeddedProperty's own members: reached with the subscript only.
        #expect(code.contains("extension Cellar.EmbeddedProperty where T == Meta {\n    /// `…title` through an embedded Meta.\n    public var title: Cellar.Property<E> { self[Meta.title] }\n    /// `…inner` through an embedded Meta.\n    public var inner: Cellar.EmbeddedProperty<E, Inner> { self[Meta.inner] }\n}"))
        #expect(!code.contains("var count: Cellar.Property<E>") && !code.contains("var name: Cellar.Property<E>"))
        // An embedded type without properties.
        #expect(code.contains("    public func write(_ value: Inner, to record: Cellar.RecordBuilder) throws {\n        _ = (value, record)\n    }"))
        #expect(code.contains("        _ = record\n        let value = Inner()\n        return value"))
        #expect(!code.contains("where T == Inner"))
        // The model as code.
        #expect(code.contains("Cellar.ModelProperty(name: \"meta\", id: Cellar.IdUid(id: 2, uid: "))
        #expect(code.contains("type: Cellar.PropertyType(rawValue: 101), embeddedType: \"Meta\")"))
        #expect(code.contains("], flags: 268435456),"))
    }

    @Test func nestedEmbeddedTypesAndLists() throws {
        let code = try emit("""
        final class Order: Entity {
            var id: Id = 0
            var lines: [Order.Line]?
            var done: [Line] = []
            required init() {}
            // cellar: embedded
            struct Line {
                var sku = ""
            }
        }
        """)
        #expect(code.contains("extension Order.Line: Cellar.EmbeddedInspectable {\n    static let embeddedBinding = Order_LineCellarBinding()\n}"))
        #expect(code.contains("        try record.add(embeddedList: entity.lines, slot: 1)\n        try record.add(embeddedList: entity.done, slot: 2)"))
        #expect(code.contains("        entity.lines = try record.embeddedList(Order.Line.self, slot: 1)\n        entity.done = try record.embeddedList(Order.Line.self, slot: 2) ?? []"))
        #expect(code.contains("    static let lines = Cellar.EmbeddedProperty<Order, Order.Line>(name: \"lines\", id: 2, type: Cellar.PropertyType(rawValue: 1101))"))
        #expect(code.contains("extension Cellar.EmbeddedProperty where T == Order.Line {\n    /// `…sku` through an embedded Order.Line.\n    var sku: Cellar.Property<E> { self[Order.Line.sku] }"))
        #expect(code.contains("embeddedType: \"Line\")"))
    }
}
