// libFuzzer target: embedded objects, the nested records in an owner's record
// (`EmbeddedRecords`), through the public API only.
//
// Byte 0 picks the mode; 0…6 (mod 8) name a type of `FuzzModel` (Contact, Order, Address, Geo,
// Line, Outline, Node) and the rest of the input is a record of that type:
// `RecordReader.verify(_:in:)` and the binding's `read`. Either may throw `fileCorrupt` (or
// `illegalArgument`) and nothing else; a record that verifies must read, and what reads is
// written again and must verify and read back to an equal value.
//
// 7 (mod 8) is the structured mode: the rest of the input drives the making of contacts, orders
// and outlines (strings, list lengths, nesting depths up to past `Model.maxEmbeddingDepth`), which
// are put into a store in memory, got back and compared, and queried through their embedded
// objects; each query must find what the same filter finds in memory. A value nested too deep
// must be refused by `put` with `illegalArgument`, and leave nothing stored.
//
// A crash, a Swift trap or an AddressSanitizer report is a bug in Cellar.
@_spi(CellarGenerated) import Cellar
import EmbeddedFuzzModel
import Foundation

/// The model and the store of the structured mode, made once.
enum Fixture {
    static let model = FuzzModel.make()
    static let store: Store = {
        do {
            return try Store(directoryPath: "memory:fuzz-embedded", model: model)
        } catch {
            fatalError("the store in memory does not open: \(error)")
        }
    }()
}

/// What `body` gives; nil when it throws `fileCorrupt` or `illegalArgument`, a trap for any other error.
func outcome<T>(_ what: String, _ body: () throws -> T) -> T? {
    do {
        return try body()
    } catch CellarError.Code.fileCorrupt, CellarError.Code.illegalArgument {
        return nil
    } catch {
        fatalError("\(what) threw \(error), not fileCorrupt or illegalArgument")
    }
}

/// Record mode for one type: verify, read, write again, read back.
func checkRecord<T>(_ type: String, _ record: UnsafeRawBufferPointer, slotCount: Int,
                    read: (RecordReader) throws -> T, write: (T, RecordBuilder) throws -> Void, same: (T, T) -> Bool) {
    let entity = Fixture.model.entity(named: type)!
    let verifies = outcome("verify") { try RecordReader(record).verify(entity, in: Fixture.model) } != nil
    let value = outcome("read") { try read(RecordReader(record)) }
    guard let value else {
        precondition(!verifies, "a \(type) record verifies but does not read: \(Array(record))")
        return
    }
    let builder = RecordBuilder()
    builder.begin(slotCount: slotCount)
    do {
        try write(value, builder)
    } catch {
        fatalError("a \(type) that reads does not write: \(error), record \(Array(record))")
    }
    let again = Array(builder.bytes)
    again.withUnsafeBytes { bytes in
        do {
            try RecordReader(bytes).verify(entity, in: Fixture.model)
            let back = try read(RecordReader(bytes))
            precondition(same(value, back), "a \(type) changed through a write and a read, record \(Array(record))")
        } catch {
            fatalError("a \(type) written again does not verify or read: \(error), record \(Array(record))")
        }
    }
}

func recordMode(_ type: Int, _ record: UnsafeRawBufferPointer) {
    switch type {
    case 0:
        let binding = Contact.entityBinding
        checkRecord("Contact", record, slotCount: binding.slotCount, read: { try binding.read(id: 1, from: $0) },
                    write: { try binding.write($0, to: $1) }, same: { $0.sameValues(as: $1) })
    case 1:
        let binding = Order.entityBinding
        checkRecord("Order", record, slotCount: binding.slotCount, read: { try binding.read(id: 1, from: $0) },
                    write: { try binding.write($0, to: $1) }, same: { $0.sameValues(as: $1) })
    case 2:
        let binding = Address.embeddedBinding
        checkRecord("Address", record, slotCount: binding.slotCount, read: binding.read, write: binding.write, same: ==)
    case 3:
        let binding = Geo.embeddedBinding
        checkRecord("Geo", record, slotCount: binding.slotCount, read: binding.read, write: binding.write, same: ==)
    case 4:
        let binding = Line.embeddedBinding
        checkRecord("Line", record, slotCount: binding.slotCount, read: binding.read, write: binding.write, same: ==)
    case 5:
        let binding = Outline.entityBinding
        checkRecord("Outline", record, slotCount: binding.slotCount, read: { try binding.read(id: 1, from: $0) },
                    write: { try binding.write($0, to: $1) }, same: { $0.sameValues(as: $1) })
    default:
        let binding = Node.embeddedBinding
        checkRecord("Node", record, slotCount: binding.slotCount, read: binding.read, write: binding.write, same: ==)
    }
}

/// The input's bytes, one at a time; zeros once they run out.
struct Source {
    let bytes: UnsafeRawBufferPointer
    var at = 0
    mutating func next() -> UInt8 {
        defer { at += 1 }
        return at < bytes.count ? bytes[at] : 0
    }
    mutating func below(_ n: Int) -> Int { Int(next()) % n }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    /// Strings that compare alike in some ways and not in others (case, canonical equivalence),
    /// or a few bytes of the input.
    static let strings = ["", "Rome", "rome", "Oslo", "é", "e\u{301}", "日本", "A-1", "A-2", "A-10", "\u{0}"]
    mutating func string() -> String {
        let pick = below(Self.strings.count + 1)
        if pick < Self.strings.count { return Self.strings[pick] }
        let count = below(9)
        return String(decoding: (0..<count).map { _ in next() }, as: UTF8.self)
    }
    mutating func integer() -> Int {
        switch below(4) {
        case 0: return Int(Int8(bitPattern: next()))
        case 1: return [Int.min, Int.max, 0, -1][below(4)]
        default: return below(10)
        }
    }
    mutating func double() -> Double {
        switch below(4) {
        case 0: return [Double.nan, -0.0, .infinity, -.infinity, .ulpOfOne][below(5)]
        default: return Double(below(90)) - 20
        }
    }

    mutating func address() -> Address? {
        guard !chance(25) else { return nil }
        return Address(city: string(), zip: string(), tags: (0..<below(4)).map { _ in string() },
                       geo: chance(50) ? Geo(lat: double(), lon: double()) : nil)
    }
    mutating func lines() -> [Line] {
        (0..<below(8)).map { _ in Line(sku: string(), quantity: integer(), shipTo: chance(30) ? address() : nil) }
    }
    /// A node whose chain of `child`ren is `depth` levels deep (1: no child), with a few lists of
    /// children near the top; `budget` bounds the nodes made.
    mutating func node(depth: Int, budget: inout Int) -> Node {
        budget -= 1
        let node = Node(label: string(), value: integer())
        if depth > 1 { node.child = self.node(depth: depth - 1, budget: &budget) }
        if budget > 0 && chance(30) {
            for _ in 0..<below(4) where budget > 0 {
                node.children.append(self.node(depth: below(max(depth, 1)) + 1, budget: &budget))
            }
        }
        return node
    }
}

/// Structured mode: objects made from the input, put, got back, queried.
func structuredMode(_ input: UnsafeRawBufferPointer) throws {
    var source = Source(bytes: input)
    let store = Fixture.store
    let contacts = store.box(for: Contact.self), orders = store.box(for: Order.self), outlines = store.box(for: Outline.self)
    _ = try contacts.removeAll()
    _ = try orders.removeAll()
    _ = try outlines.removeAll()

    let allContacts = (0..<source.below(8)).map { _ in Contact(source.string(), home: source.address(), work: source.address()) }
    let allOrders = (0..<source.below(8)).map { _ in Order(source.integer(), source.lines()) }
    try contacts.put(allContacts)
    try orders.put(allOrders)
    var storedOutlines: [Outline] = []
    for _ in 0..<source.below(4) {
        var budget = 200
        let depth = source.chance(50) ? source.below(8) + 1 : Model.maxEmbeddingDepth - 4 + source.below(8)
        let outline = Outline(source.string(), root: source.chance(90) ? source.node(depth: depth, budget: &budget) : nil)
        let levels = outline.root?.depth ?? 0
        do {
            try outlines.put(outline)
            precondition(levels <= Model.maxEmbeddingDepth, "an outline \(levels) levels deep was stored")
            storedOutlines.append(outline)
        } catch CellarError.Code.illegalArgument {
            precondition(levels > Model.maxEmbeddingDepth, "an outline \(levels) levels deep was refused")
            precondition(outline.id == 0, "a refused outline was given id \(outline.id)")
        }
    }
    let storedCount = try outlines.count()
    precondition(storedCount == storedOutlines.count, "refused outlines were stored")

    for contact in allContacts {
        guard let back = try contacts.get(contact.id), back.sameValues(as: contact) else { fatalError("contact \(contact.id) did not come back the same") }
    }
    for order in allOrders {
        guard let back = try orders.get(order.id), back.sameValues(as: order) else { fatalError("order \(order.id) did not come back the same") }
    }
    for outline in storedOutlines {
        guard let back = try outlines.get(outline.id), back.sameValues(as: outline) else { fatalError("outline \(outline.id) did not come back the same") }
    }

    func same(_ a: String?, _ b: String) -> Bool { a.map { $0.utf8.elementsEqual(b.utf8) } ?? false }
    func check<E: EntityInspectable>(_ name: String, _ box: Box<E>, _ all: [E], _ condition: QueryCondition<E>, _ filter: (E) -> Bool) throws {
        let query = try box.query { condition }.build()
        let found = try query.findIds().map(\.value).sorted()
        let expected = all.filter(filter).map { E.entityBinding.id(of: $0) }.sorted()
        precondition(found == expected, "\(name): the query finds \(found), the filter in memory \(expected)")
        let count = try query.count()
        precondition(count == expected.count, "\(name): count \(count), the filter in memory \(expected.count)")
    }
    let city = source.string(), zip = source.string(), sku = source.string(), label = source.string()
    let quantity = source.integer(), value = source.integer(), count = source.below(5), lat = source.double()
    try check("home.city ==", contacts, allContacts, Contact.home.city == city) { same($0.home?.city, city) }
    try check("work.zip ==", contacts, allContacts, Contact.work.zip == zip) { same($0.work?.zip, zip) }
    try check("home isNil", contacts, allContacts, Contact.home.isNil()) { $0.home == nil }
    try check("home.geo.lat >", contacts, allContacts, Contact.home.geo.lat > lat) { ($0.home?.geo?.lat).map { $0 > lat } ?? false }
    try check("home.tags contains", contacts, allContacts, Contact.home.tags.contains(city)) { $0.home?.tags.contains { same($0, city) } ?? false }
    try check("lines.any", orders, allOrders, Order.lines.any { Line.sku == sku && Line.quantity > quantity }) {
        $0.lines.contains { same($0.sku, sku) && $0.quantity > quantity }
    }
    try check("lines.sku ==", orders, allOrders, Order.lines.sku == sku) { $0.lines.contains { same($0.sku, sku) } }
    try check("lines.count >=", orders, allOrders, Order.lines.count >= count) { $0.lines.count >= count }
    try check("lines.shipTo.city ==", orders, allOrders, Order.lines.shipTo.city == city) { $0.lines.contains { same($0.shipTo?.city, city) } }
    try check("root.child.label ==", outlines, storedOutlines, Outline.root.child.label == label) { same($0.root?.child?.label, label) }
    try check("root.children.any", outlines, storedOutlines, Outline.root.children.any { Node.value > value }) {
        $0.root?.children.contains { $0.value > value } ?? false
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let rest = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    let mode = Int(data[0] % 8)
    if mode < 7 {
        recordMode(mode, rest)
    } else {
        do {
            try structuredMode(rest)
        } catch {
            fatalError("structured mode: \(error)")
        }
    }
    return 0
}
