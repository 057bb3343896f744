// The in-memory HNSW graph (Hierarchical Navigable Small World, Malkov & Yashunin): its storage
// and the primitives the algorithms in the other HNSWGraph files are built on.
//
// Nodes are object ids (`UInt64`, dense-ish but not guaranteed), mapped to slots: a slot indexes
// contiguous storage, and slots of removed nodes are reused. Per slot the graph keeps:
// - the node's vector, `floatsPerVector` floats (the dimensions padded with zeros to a multiple of 16
//   unless the `vectorCacheSimdPaddingOff` flag is set), in one 64-byte aligned buffer so the
//   SIMD kernels read whole aligned chunks. Cosine vectors are stored normalized, so a cosine
//   distance is 1 − dot. A quantized graph keeps instead one byte per dimension and two floats
//   per slot (see HNSWQuantization.swift): asked for by the index, or chosen to keep the vectors
//   within `vectorCacheHintSizeKB`, in which case no buffer grows past that bound while the codes
//   fit (`grow`); every distance the algorithms take goes through
//   `distance(_:_:)` with an `HNSWProbe`, which serves both forms;
// - the node's level L (drawn from its id, see HNSWLevels), and its neighbour lists for levels
//   0…L: level 0 in one contiguous buffer of `1 + 2M` Int32 per slot (a count, then neighbour
//   slots) — the level every search spends its time in — and levels 1…L in a small array per
//   slot of `1 + M` Int32 per level;
// - the reverse lists (which slots link to it, per level). They are not persisted (they follow
//   from the forward lists) and let a removal find every node that pointed at the removed one.
//   They are built when the first removal needs them (`buildIncoming`), then kept up to date:
//   a graph that is only loaded, searched and grown never pays for them.
//
// A graph read from its image (HNSWImage.swift) starts with its level-0 lists and vectors (or
// codes) in a copy-on-write mapping of that file (`mapping`); the first `grow` moves them into
// allocations of its own.
//
// Every change of a forward list goes through `setNeighbors`, which keeps the reverse lists in
// step and records the node in the change log (see HNSWChanges).
//
// Concurrency: the graph is a class to be used under an external lock: one writer at a time
// (insert, update, remove, takeChanges), or any number of concurrent readers (search,
// bruteForce, encodeNode, verify), never both. Searches allocate their own visited sets and
// heaps and mutate nothing.

/// An in-memory HNSW index over object ids; see the file header for its layout and thread rules.
@_spi(Testing) public final class HNSWGraph: @unchecked Sendable {
    /// The index options.
    @_spi(Testing) public let parameters: HNSWParameters
    /// Floats stored per vector: `dimensions`, padded to a multiple of 16 unless the flag says not.
    let floatsPerVector: Int
    /// Int8 codes stored per vector in a quantized graph (dimensions rounded up to 32); 0 when
    /// the graph keeps floats. A graph of floats turns into one of codes when its floats would
    /// outgrow the vector cache bound (see `grow`).
    private(set) var codesPerVector: Int
    /// Int32s per slot in `level0`: a count, then up to 2·M neighbour slots.
    let level0Stride: Int
    /// Int32s per upper level in `upper[slot]`: a count, then up to M neighbour slots.
    let upperStride: Int

    /// Slot → id (meaningless for a free slot).
    var ids: [UInt64] = []
    /// Slot → level; -1 for a free slot.
    var levels: [Int32] = []
    /// Id → slot.
    var slotOf = HNSWIdMap()
    /// Free slots, reused last-freed first.
    var freeSlots: [Int32] = []
    /// Slots the buffers have room for.
    var capacity = 0
    /// `capacity × floatsPerVector` floats, 64-byte aligned (none in a quantized graph).
    var vectors: UnsafeMutablePointer<Float>
    /// `capacity × codesPerVector` codes, 64-byte aligned (none unless quantized).
    var codes: UnsafeMutablePointer<Int8>
    /// `capacity × 2` floats: each slot's scale and squared length (none unless quantized).
    var codeFactors: UnsafeMutablePointer<Float>
    /// `capacity × level0Stride` Int32s: each slot's level-0 count and neighbours.
    var level0: UnsafeMutablePointer<Int32>
    /// Per slot: levels 1…L, `upperStride` Int32s each.
    var upper: [[Int32]] = []
    /// Per slot, per level 0…L: the slots whose list at that level holds this slot; empty
    /// until `incomingBuilt`.
    var incoming: [[[Int32]]] = []
    /// Whether `incoming` is built and kept up to date (from the first removal on).
    var incomingBuilt = false
    /// The entry point's slot, -1 when the graph is empty.
    var entrySlot: Int32 = -1
    /// The entry point's level (the highest level in the graph), -1 when empty.
    var topLevel = -1
    /// The changes since the last `takeChanges()`.
    var pending = HNSWChanges()
    /// The stamp of the index's tree that this content is (see HNSWImage.swift); nil when the
    /// tree has none.
    var stamp: [UInt8]?
    /// Whether the graph was read from its image (so the image on disk is of `stamp`).
    var readFromImage = false

    /// An empty graph, to hold about `expectedCount` nodes: it keeps codes from the start when
    /// the floats of that many would not fit the vector cache bound (see ``keepsCodes(_:count:)``).
    @_spi(Testing) public convenience init(parameters: HNSWParameters, expectedCount: Int = 0) {
        self.init(parameters: parameters, codes: Self.keepsCodes(parameters, count: expectedCount))
    }

    /// An empty graph that keeps int8 codes (`keepsCodes`) or floats.
    init(parameters: HNSWParameters, codes keepsCodes: Bool) {
        self.parameters = parameters
        let dimensions = parameters.dimensions
        floatsPerVector = Self.floatsPerVector(parameters)
        codesPerVector = keepsCodes ? HNSWQuantization.codesPerVector(dimensions: dimensions) : 0
        level0Stride = 1 + parameters.maxDegree(level: 0)
        upperStride = 1 + parameters.maxDegree(level: 1)
        vectors = Self.allocate(Float.self, count: 0)
        codes = Self.allocate(Int8.self, count: 0)
        codeFactors = Self.allocate(Float.self, count: 0)
        level0 = Self.allocate(Int32.self, count: 0)
    }

    /// The image mapping some buffers point into (see HNSWImage.swift); nil once they all are
    /// the graph's own allocations.
    private var mapping: HNSWImageMapping?

    deinit {
        release(vectors)
        release(codes)
        release(codeFactors)
        release(level0)
    }

    /// Frees `buffer` unless it points into the image mapping.
    private func release<T>(_ buffer: UnsafeMutablePointer<T>) {
        if let mapping, mapping.contains(buffer) { return }
        UnsafeMutableRawPointer(buffer).deallocate()
    }

    /// Points the graph's buffers that are given (non-nil) into `mapping`, `capacity` slots
    /// each (the others stay as allocated). For a graph just made, before anything is added.
    func useMapped(_ mapping: HNSWImageMapping, level0: UnsafeMutablePointer<Int32>?, codes: UnsafeMutablePointer<Int8>?,
                   codeFactors: UnsafeMutablePointer<Float>?, vectors: UnsafeMutablePointer<Float>?, capacity: Int) {
        /// Replaces `buffer` (the empty allocation of `init`) with `mapped` when there is one.
        func adopt<T>(_ buffer: inout UnsafeMutablePointer<T>, _ mapped: UnsafeMutablePointer<T>?) {
            guard let mapped else { return }
            UnsafeMutableRawPointer(buffer).deallocate()
            buffer = mapped
        }
        adopt(&self.level0, level0)
        adopt(&self.codes, codes)
        adopt(&self.codeFactors, codeFactors)
        adopt(&self.vectors, vectors)
        self.mapping = mapping
        self.capacity = capacity
    }

    /// A 64-byte aligned buffer of `count` zeroed values.
    private static func allocate<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        let bytes = max(64, count * MemoryLayout<T>.stride)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        return raw.bindMemory(to: T.self, capacity: max(1, count))
    }

    // MARK: Reading

    /// How many nodes the graph holds.
    @_spi(Testing) public var count: Int { slotOf.count }
    /// Whether `id` is in the graph.
    @_spi(Testing) public func contains(_ id: UInt64) -> Bool { slotOf[id] != nil }
    /// The entry point's id, nil when the graph is empty.
    @_spi(Testing) public var entryPoint: UInt64? { entrySlot < 0 ? nil : ids[Int(entrySlot)] }
    /// The ids in the graph, in no particular order.
    @_spi(Testing) public var allIDs: [UInt64] { slotOf.keysInAnyOrder }
    /// Bytes the stored vectors take (compare with ``HNSWParameters/vectorCacheByteBound``):
    /// their floats, or their codes and factors.
    @_spi(Testing) public var residentVectorBytes: Int {
        isQuantized ? capacity * (codesPerVector + 2 * MemoryLayout<Float>.stride) : capacity * floatsPerVector * MemoryLayout<Float>.stride
    }
    /// Bytes the neighbour lists take (level 0 in its buffer, the levels above in their arrays).
    @_spi(Testing) public var residentListBytes: Int {
        capacity * level0Stride * MemoryLayout<Int32>.stride + upper.reduce(0) { $0 + $1.count * MemoryLayout<Int32>.stride }
    }

    /// The level of `id`, nil when it is not in the graph.
    @_spi(Testing) public func level(of id: UInt64) -> Int? { slotOf[id].map { Int(levels[Int($0)]) } }

    /// The neighbour ids of `id` on each of its levels (index = level), nil when it is not in the graph.
    @_spi(Testing) public func neighbors(of id: UInt64) -> [[UInt64]]? {
        guard let slot = slotOf[id] else { return nil }
        return (0...Int(levels[Int(slot)])).map { level in neighbors(slot, level).map { ids[Int($0)] } }
    }

    /// The stored floats of `slot` (padded; normalized for cosine); a graph that is not quantized only.
    @inline(__always)
    func vector(_ slot: Int32) -> UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: vectors + Int(slot) * floatsPerVector, count: floatsPerVector)
    }

    /// The vector of `slot` to measure from (valid until the slot's storage changes or moves).
    @inline(__always)
    func probe(_ slot: Int32) -> HNSWProbe {
        guard isQuantized else { return HNSWProbe(pointer: UnsafeRawPointer(vectors + Int(slot) * floatsPerVector), scale: 0, squaredLength: 0) }
        return HNSWProbe(pointer: UnsafeRawPointer(codes + Int(slot) * codesPerVector),
                         scale: codeFactors[2 * Int(slot)], squaredLength: codeFactors[2 * Int(slot) + 1])
    }

    /// The distance between a probe (of a slot, or of a prepared query: see `withProbe`) and the
    /// vector of `slot`; approximate in a quantized graph.
    @inline(__always)
    func distance(_ query: HNSWProbe, _ slot: Int32) -> Float {
        if isQuantized { return quantizedDistance(query, slot) }
        return floatDistance(UnsafeBufferPointer(start: query.pointer.assumingMemoryBound(to: Float.self), count: floatsPerVector), vector(slot))
    }

    /// The exact distance between two prepared float vectors of `floatsPerVector` floats.
    @inline(__always)
    func floatDistance(_ query: UnsafeBufferPointer<Float>, _ other: UnsafeBufferPointer<Float>) -> Float {
        switch parameters.distanceType {
        case .euclidean: return VectorDistance.squaredEuclidean(query, other, count: floatsPerVector)
        case .cosine, .dotProduct: return VectorDistance.innerProductDistance(query, other, count: floatsPerVector)
        case .dotProductNonNormalized: return VectorDistance.nonNormalizedDotDistance(VectorDistance.dot(query, other, count: floatsPerVector))
        case .geo: return VectorDistance.geoKilometers(query, other)
        }
    }

    /// The distance between the vectors of two slots.
    func distance(_ a: Int32, _ b: Int32) -> Float { distance(probe(a), b) }

    /// `vector` as stored and searched: the first `dimensions` components, zero-padded to
    /// `floatsPerVector`, normalized for cosine. Throws `.illegalArgument` for a short vector or a
    /// component that is not finite.
    func prepare(_ vector: [Float]) throws -> [Float] {
        let dimensions = parameters.dimensions
        guard vector.count >= dimensions else {
            throw CellarError.illegalArgument("HNSW index: a vector needs \(dimensions) dimensions, got \(vector.count)")
        }
        var result = [Float](repeating: 0, count: floatsPerVector)
        for i in 0..<dimensions {
            guard vector[i].isFinite else {
                throw CellarError.illegalArgument("HNSW index: vector component \(i) is \(vector[i]), not a finite number")
            }
            result[i] = vector[i]
        }
        result.withUnsafeMutableBufferPointer { normalizeInPlace($0.baseAddress!) }
        return result
    }

    /// Scales the `floatsPerVector` floats at `vector` to length 1 when the index is cosine (a
    /// zero vector stays zero); leaves them as they are for the other distances.
    func normalizeInPlace(_ vector: UnsafeMutablePointer<Float>) {
        guard parameters.distanceType == .cosine else { return }
        let buffer = UnsafeBufferPointer(start: vector, count: floatsPerVector)
        let norm = VectorDistance.dot(buffer, buffer, count: floatsPerVector).squareRoot()
        if norm > 0 { for i in 0..<parameters.dimensions { vector[i] /= norm } }
    }

    /// The neighbour slots of `slot` on `level` (0 ≤ level ≤ the node's level).
    func neighbors(_ slot: Int32, _ level: Int) -> [Int32] {
        if level == 0 {
            let base = level0 + Int(slot) * level0Stride
            return Array(UnsafeBufferPointer(start: base + 1, count: Int(base[0])))
        }
        let offset = (level - 1) * upperStride
        return upper[Int(slot)].withUnsafeBufferPointer { list in
            Array(list[(offset + 1)..<(offset + 1 + Int(list[offset]))])
        }
    }

    // MARK: Writing

    /// Replaces the list of `slot` on `level` with `new` (at most the level's max degree,
    /// distinct, without `slot`), keeping the reverse lists in step; records the node in
    /// `changes` when the list changed.
    func setNeighbors(_ slot: Int32, _ level: Int, _ new: [Int32], _ changes: inout HNSWChanges) {
        let old = neighbors(slot, level)
        guard old != new else { return }
        if !incomingBuilt {
            // No reverse lists to keep in step.
        } else if new.count == old.count + 1 && new.starts(with: old) {
            // The common case (a link added to a list with room): one reverse entry to add.
            incoming[Int(new[old.count])][level].append(slot)
        } else {
            for n in old where !new.contains(n) {
                if let index = incoming[Int(n)][level].firstIndex(of: slot) { incoming[Int(n)][level].remove(at: index) }
            }
            for n in new where !old.contains(n) { incoming[Int(n)][level].append(slot) }
        }
        if level == 0 {
            let base = level0 + Int(slot) * level0Stride
            base[0] = Int32(new.count)
            for (i, n) in new.enumerated() { base[1 + i] = n }
        } else {
            let offset = (level - 1) * upperStride
            upper[Int(slot)][offset] = Int32(new.count)
            for (i, n) in new.enumerated() { upper[Int(slot)][offset + 1 + i] = n }
        }
        changes.write(ids[Int(slot)])
    }

    /// A slot for a new node `id` of `level` holding the prepared `vector`, with empty lists.
    func allocateSlot(id: UInt64, level: Int, vector: [Float]) -> Int32 {
        let slot = allocateSlot(id: id, level: level)
        vector.withUnsafeBufferPointer { storeVector(slot, prepared: $0.baseAddress!) }
        return slot
    }

    /// A slot for a new node `id` of `level`, with empty lists; its vector is to be written.
    func allocateSlot(id: UInt64, level: Int) -> Int32 {
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            ids[Int(slot)] = id
            levels[Int(slot)] = Int32(level)
        } else {
            slot = Int32(ids.count)
            if ids.count == capacity { grow(to: max(64, capacity * 2), needed: capacity + 1) }
            ids.append(id)
            levels.append(Int32(level))
            upper.append([])
            if incomingBuilt { incoming.append([]) }
        }
        slotOf[id] = slot
        upper[Int(slot)] = level == 0 ? [] : [Int32](repeating: 0, count: level * upperStride)
        if incomingBuilt { incoming[Int(slot)] = [[Int32]](repeating: [], count: level + 1) }
        (level0 + Int(slot) * level0Stride)[0] = 0
        return slot
    }

    /// Builds the reverse lists from the forward ones (once; later changes keep them up to date).
    func buildIncoming() {
        guard !incomingBuilt else { return }
        incoming = levels.map { $0 < 0 ? [] : [[Int32]](repeating: [], count: Int($0) + 1) }
        for slot in 0..<levels.count where levels[slot] >= 0 {
            let base = level0 + slot * level0Stride
            for i in 0..<Int(base[0]) { incoming[Int(base[1 + i])][0].append(Int32(slot)) }
            for l in stride(from: 1, through: Int(levels[slot]), by: 1) {
                for n in neighbors(Int32(slot), l) { incoming[Int(n)][l].append(Int32(slot)) }
            }
        }
        incomingBuilt = true
    }

    /// Frees the slot of a node whose lists are empty and that no list holds any more.
    func freeSlot(_ slot: Int32) {
        slotOf[ids[Int(slot)]] = nil
        levels[Int(slot)] = -1
        upper[Int(slot)] = []
        if incomingBuilt { incoming[Int(slot)] = [] }
        (level0 + Int(slot) * level0Stride)[0] = 0
        freeSlots.append(slot)
    }

    /// Makes room for `count` nodes in all, so that adding them moves nothing.
    func reserve(_ count: Int) {
        guard count > capacity else { return }
        grow(to: count, needed: count)
        ids.reserveCapacity(count)
        levels.reserveCapacity(count)
        upper.reserveCapacity(count)
        slotOf.reserveCapacity(count)
    }

    /// Moves the buffers to room for `preferred` slots, or fewer (at least `needed`) to stay
    /// within the vector cache bound: a graph grows only as far as the bound allows, and when
    /// `needed` slots of floats would not fit, it turns into a graph of codes first. When even the
    /// codes of `needed` slots do not fit, it grows to `preferred` (the bound is then exceeded).
    private func grow(to preferred: Int, needed: Int) {
        /// How many slots of `bytes` each the bound holds.
        func fitting(_ bytes: Int) -> Int { Int(clamping: parameters.vectorCacheByteBound / UInt64(bytes)) }
        if !isQuantized && Self.keepsCodes(parameters, count: needed) { quantizeVectors() }
        let perSlot = isQuantized ? codesPerVector + 2 * MemoryLayout<Float>.stride : floatsPerVector * MemoryLayout<Float>.stride
        let newCapacity = needed <= fitting(perSlot) ? min(preferred, fitting(perSlot)) : preferred
        /// Moves `buffer`, `perSlot` values a slot, to room for `newCapacity` slots.
        func move<T>(_ buffer: inout UnsafeMutablePointer<T>, perSlot: Int) {
            let moved = Self.allocate(T.self, count: newCapacity * perSlot)
            moved.update(from: buffer, count: capacity * perSlot)
            release(buffer)
            buffer = moved
        }
        move(&vectors, perSlot: isQuantized ? 0 : floatsPerVector)
        move(&codes, perSlot: codesPerVector)
        move(&codeFactors, perSlot: isQuantized ? 2 : 0)
        move(&level0, perSlot: level0Stride)
        capacity = newCapacity
        mapping = nil  // every buffer is the graph's own now
    }

    /// Turns a graph of floats into one of codes (see HNSWQuantization.swift): each live slot's
    /// floats quantized, the floats freed. For a writer, when the floats outgrow the bound.
    private func quantizeVectors() {
        let perVector = HNSWQuantization.codesPerVector(dimensions: parameters.dimensions)
        let newCodes = Self.allocate(Int8.self, count: capacity * perVector)
        let newFactors = Self.allocate(Float.self, count: capacity * 2)
        for slot in 0..<levels.count where levels[slot] >= 0 {
            let (scale, length) = HNSWQuantization.quantize(vectors + slot * floatsPerVector, count: parameters.dimensions,
                                                           into: newCodes + slot * perVector, codeCount: perVector)
            newFactors[2 * slot] = scale
            newFactors[2 * slot + 1] = length
        }
        release(codes)
        release(codeFactors)
        release(vectors)
        codes = newCodes
        codeFactors = newFactors
        vectors = Self.allocate(Float.self, count: 0)
        codesPerVector = perVector
    }

    /// Returns the changes since the last call (nodes to write, nodes to delete, whether the
    /// entry point changed) and starts a new log.
    @_spi(Testing) public func takeChanges() -> HNSWChanges {
        defer { pending = HNSWChanges() }
        return pending
    }
}
