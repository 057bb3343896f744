/// How embedded objects are stored: an embedded object is a nested record (the layout of
/// `RecordLayout`, its own slot table and fields) in a variable field of its owner's record:
///
/// ```
/// one embedded object      u32 length, the nested record
/// a list of them           u32 length, then u32 count and per element: u32 length, the nested record
/// ```
///
/// (the list's payload has the layout of a list of `Data`, see `CollectionEncoding`). A nil
/// optional is an absent field; an empty list a present one with a count of 0. Records nest at
/// most `Model.maxEmbeddingDepth` levels: deeper values are refused on write and read as corrupt.
@_spi(CellarGenerated) extension RecordBuilder {
    /// Adds one embedded object as a nested record.
    public func add<T: EmbeddedInspectable>(embedded value: T, slot: Int) throws {
        try addNested(slot: slot) { try Self.write(value, into: $0) }
    }

    /// Adds an embedded object when there is one; nil leaves the field absent.
    public func add<T: EmbeddedInspectable>(embedded value: T?, slot: Int) throws {
        if let value { try add(embedded: value, slot: slot) }
    }

    /// Adds a list of embedded objects, each a nested record.
    public func add<T: EmbeddedInspectable>(embeddedList values: [T], slot: Int) throws {
        try addNestedList(count: values.count, slot: slot) { try Self.write(values[$0], into: $1) }
    }

    /// Adds a list of embedded objects when there is one; nil leaves the field absent.
    public func add<T: EmbeddedInspectable>(embeddedList values: [T]?, slot: Int) throws {
        if let values { try add(embeddedList: values, slot: slot) }
    }

    /// Adds a nested record that `write` builds (starting it with its slot count) in the builder
    /// it is given: how embedded objects are stored, with or without a generated binding.
    func addNested(slot: Int, _ write: (RecordBuilder) throws -> Void) throws {
        let nested = try nestedBuilder()
        try write(nested)
        add(bytes: nested.bytes, slot: slot)
    }

    /// Adds a list of `count` nested records, the one at each index built by `write` (as
    /// `addNested`'s).
    func addNestedList(count: Int, slot: Int, _ write: (_ index: Int, RecordBuilder) throws -> Void) throws {
        try CollectionEncoding.checkCount(count, "list")
        var payload: [UInt8] = []
        payload.reserveCapacity(4 + count * 64)
        Self.appendLittleEndian(UInt32(count), to: &payload)
        // An empty list nests no record, so it is allowed at the deepest level: the nested
        // builder (which refuses a level past the deepest) is asked for only for an element.
        if count > 0 {
            let nested = try nestedBuilder()
            for index in 0..<count {
                try write(index, nested)
                let bytes = nested.bytes
                Self.appendLittleEndian(UInt32(bytes.count), to: &payload)
                payload.append(contentsOf: bytes)
            }
        }
        try CollectionEncoding.checkSize(payload.count)
        payload.withUnsafeBytes { add(bytes: $0, slot: slot) }
    }

    private static func write<T: EmbeddedInspectable>(_ value: T, into nested: RecordBuilder) throws {
        let binding = T.embeddedBinding
        nested.begin(slotCount: binding.slotCount)
        try binding.write(value, to: nested)
    }

    private static func appendLittleEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// The builder nested records of this one are written with (made once, then reused).
    private func nestedBuilder() throws -> RecordBuilder {
        if let nested { return nested }
        guard depth < Model.maxEmbeddingDepth else {
            throw CellarError.illegalArgument("embedded objects nest more than \(Model.maxEmbeddingDepth) levels deep; Cellar stores at most \(Model.maxEmbeddingDepth)")
        }
        let made = RecordBuilder(capacity: 256)
        made.depth = depth + 1
        nested = made
        return made
    }
}

@_spi(CellarGenerated) extension RecordReader {
    /// The nested record in `slot` (an embedded object's); nil when absent. Throws `fileCorrupt`
    /// for bytes that are not a record, or a record nested deeper than `Model.maxEmbeddingDepth`.
    public func nested(slot: Int) throws -> RecordReader? {
        guard let bytes = try bytes(slot: slot) else { return nil }
        return try nested(bytes)
    }

    /// A reader on `bytes`, a record nested one level below this one.
    func nested(_ bytes: UnsafeRawBufferPointer) throws -> RecordReader {
        guard depth < Model.maxEmbeddingDepth else {
            throw CellarError.fileCorrupt("an object record nests records more than \(Model.maxEmbeddingDepth) levels deep")
        }
        return try RecordReader(bytes, depth: UInt8(depth + 1))
    }

    /// The embedded object in `slot`; nil when absent.
    public func embedded<T: EmbeddedInspectable>(_ type: T.Type, slot: Int) throws -> T? {
        guard let record = try nested(slot: slot) else { return nil }
        return try T.embeddedBinding.read(from: record)
    }

    /// The list of embedded objects in `slot`; nil when absent.
    public func embeddedList<T: EmbeddedInspectable>(_ type: T.Type, slot: Int) throws -> [T]? {
        guard let payload = try bytes(slot: slot) else { return nil }
        var values: [T] = []
        try forEachNested(payload) { values.append(try T.embeddedBinding.read(from: $0)) }
        return values
    }

    /// Calls `body` with each nested record of a list payload (see `EmbeddedRecords`), in order.
    func forEachNested(_ payload: UnsafeRawBufferPointer, _ body: (RecordReader) throws -> Void) throws {
        var elements = CollectionElements(payload, width: nil)
        _ = try elements.count()
        while let bytes = try elements.next() { try body(try nested(bytes)) }
    }
}

@_spi(CellarGenerated) extension RecordReader {
    /// Checks the record as one of `entity` (an entity or embedded type of `model`): every field
    /// against its property's type (see `verify(types:)`), and every nested record of an
    /// embedded object against its type, down to the deepest.
    public func verify(_ entity: ModelEntity, in model: Model) throws {
        try verify(types: entity.typesBySlot)
        for property in entity.properties where property.type.isEmbedded {
            guard let name = property.embeddedType, let type = model.entity(named: name) else { continue }
            let slot = Int(property.id.id) - 1
            do {
                if property.type == .embeddedList {
                    if let payload = try bytes(slot: slot) { try forEachNested(payload) { try $0.verify(type, in: model) } }
                } else if let nested = try nested(slot: slot) {
                    try nested.verify(type, in: model)
                }
            } catch let error as CellarError where error.code == .fileCorrupt {
                let reason = error.message
                throw CellarError.fileCorrupt("\(entity.name).\(property.name): \(reason)")
            }
        }
    }
}
