// The options of an HNSW (vector) index, with ObjectBox's names and defaults, their checks, and
// their JSON form for the model file.
//
// - `dimensions` (required, 1…65536): vectors shorter than this are refused by the graph;
//   longer ones are read up to `dimensions`.
// - `neighborsPerNode` ("M", default 30, 2…512): the most neighbours a node keeps on the levels
//   above 0; level 0 keeps up to 2·M.
// - `indexingSearchCount` ("efConstruction", default 100, 1…10000): how many candidates an
//   insertion searches for on each level; the graph uses at least M.
// - `distanceType` (default `euclidean`): see ``VectorDistanceType``.
// - `reparationBacklinkProbability` (default 1.0, 0…1): when a node is removed and a former
//   neighbour gets new neighbours, the probability that each new neighbour also links back.
// - `vectorCacheHintSizeKB` (default 2097152, i.e. 2 GiB; 1…2⁴⁰): the bound on the bytes the
//   graph keeps for its vectors in memory (``HNSWParameters/vectorCacheByteBound``, KB × 1024).
//   While the floats fit, the graph keeps floats; when they would not, it keeps int8 codes (a
//   quarter of the bytes) and re-scores each search's candidates with the exact vectors read from
//   the records, as `"quantization": "int8"` does (see HNSWQuantization.swift). A bound below
//   even the codes' bytes is exceeded by them (nothing is paged out), and geo indexes keep floats.
// - `flags` (default none), ObjectBox's names: `vectorCacheSimdPaddingOff` (effective: vectors
//   are stored unpadded, the kernels then run their scalar tail), `reparationLimitCandidates`
//   (effective: a removal's repair offers each former neighbour only the closest M — 2·M on
//   level 0 — of the removed node's neighbours instead of all), `debugLogs` and
//   `debugLogsDetailed` (accepted and kept; no effect in the graph, which does not log).
//
// Two indexes with different parameters are different indexes: `==` compares every option, and
// an index whose parameters change must be rebuilt.

/// ObjectBox's HNSW flags. Raw values are ObjectBox's bits.
@_spi(Testing) public struct HNSWFlags: OptionSet, Hashable, Sendable {
    @_spi(Testing) public var rawValue: UInt32
    @_spi(Testing) public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Accepted; the graph does not log.
    @_spi(Testing) public static let debugLogs = HNSWFlags(rawValue: 1)
    /// Accepted; the graph does not log.
    @_spi(Testing) public static let debugLogsDetailed = HNSWFlags(rawValue: 2)
    /// Vectors are stored with exactly `dimensions` floats instead of padded to a multiple of 16.
    @_spi(Testing) public static let vectorCacheSimdPaddingOff = HNSWFlags(rawValue: 4)
    /// A removal's repair offers each former neighbour at most the max degree of candidates.
    @_spi(Testing) public static let reparationLimitCandidates = HNSWFlags(rawValue: 8)

    /// Every flag with its name, in the order they are written.
    @_spi(Testing) public static let named: [(name: String, flag: HNSWFlags)] = [
        ("debugLogs", .debugLogs), ("debugLogsDetailed", .debugLogsDetailed),
        ("vectorCacheSimdPaddingOff", .vectorCacheSimdPaddingOff),
        ("reparationLimitCandidates", .reparationLimitCandidates),
    ]
}

/// The options of one HNSW index (see the file header for each one's meaning and range).
@_spi(Testing) public struct HNSWParameters: Hashable, Sendable {
    /// The accepted ranges.
    @_spi(Testing) public static let dimensionsRange = 1...65_536
    @_spi(Testing) public static let neighborsPerNodeRange = 2...512
    @_spi(Testing) public static let indexingSearchCountRange = 1...10_000
    @_spi(Testing) public static let vectorCacheHintSizeKBRange: ClosedRange<UInt64> = 1...(1 << 40)
    /// The defaults (ObjectBox's).
    @_spi(Testing) public static let defaultNeighborsPerNode = 30
    @_spi(Testing) public static let defaultIndexingSearchCount = 100
    @_spi(Testing) public static let defaultVectorCacheHintSizeKB: UInt64 = 2_097_152

    @_spi(Testing) public var dimensions: Int
    @_spi(Testing) public var neighborsPerNode: Int
    @_spi(Testing) public var indexingSearchCount: Int
    @_spi(Testing) public var distanceType: VectorDistanceType
    @_spi(Testing) public var reparationBacklinkProbability: Double
    @_spi(Testing) public var vectorCacheHintSizeKB: UInt64
    @_spi(Testing) public var flags: HNSWFlags
    @_spi(Testing) public var quantization: HNSWQuantization

    /// Parameters checked against the accepted ranges; throws `.illegalArgument` naming the
    /// option and its range.
    @_spi(Testing) public init(dimensions: Int, neighborsPerNode: Int = defaultNeighborsPerNode,
                               indexingSearchCount: Int = defaultIndexingSearchCount,
                               distanceType: VectorDistanceType = .euclidean,
                               reparationBacklinkProbability: Double = 1.0,
                               vectorCacheHintSizeKB: UInt64 = defaultVectorCacheHintSizeKB,
                               flags: HNSWFlags = [], quantization: HNSWQuantization = .none) throws {
        self.dimensions = dimensions
        self.neighborsPerNode = neighborsPerNode
        self.indexingSearchCount = indexingSearchCount
        self.distanceType = distanceType
        self.reparationBacklinkProbability = reparationBacklinkProbability
        self.vectorCacheHintSizeKB = vectorCacheHintSizeKB
        self.flags = flags
        self.quantization = quantization
        if let problem = firstProblem() { throw CellarError.illegalArgument("HNSW index: \(problem)") }
    }

    /// The first option outside its range, in words, or nil.
    func firstProblem() -> String? {
        if !Self.dimensionsRange.contains(dimensions) {
            return "dimensions must be from 1 to \(Self.dimensionsRange.upperBound), got \(dimensions)"
        }
        if !Self.neighborsPerNodeRange.contains(neighborsPerNode) {
            return "neighborsPerNode must be from \(Self.neighborsPerNodeRange.lowerBound) to \(Self.neighborsPerNodeRange.upperBound), got \(neighborsPerNode)"
        }
        if !Self.indexingSearchCountRange.contains(indexingSearchCount) {
            return "indexingSearchCount must be from 1 to \(Self.indexingSearchCountRange.upperBound), got \(indexingSearchCount)"
        }
        if !(0...1).contains(reparationBacklinkProbability) {
            return "reparationBacklinkProbability must be from 0 to 1, got \(reparationBacklinkProbability)"
        }
        if !Self.vectorCacheHintSizeKBRange.contains(vectorCacheHintSizeKB) {
            return "vectorCacheHintSizeKB must be from 1 to \(Self.vectorCacheHintSizeKBRange.upperBound), got \(vectorCacheHintSizeKB)"
        }
        if distanceType == .geo && dimensions < 2 {
            return "dimensions must be at least 2 for distanceType geo ([latitude, longitude]), got \(dimensions)"
        }
        if distanceType == .geo && quantization != .none {
            return "quantization \(quantization.rawValue) is not for distanceType geo (two coordinates gain nothing from it)"
        }
        return nil
    }

    /// The most neighbours a node keeps on `level`: 2·M on level 0, M above.
    @_spi(Testing) public func maxDegree(level: Int) -> Int { level == 0 ? 2 * neighborsPerNode : neighborsPerNode }

    /// The candidate count an insertion searches for: `indexingSearchCount`, at least M.
    var effectiveIndexingSearchCount: Int { max(indexingSearchCount, neighborsPerNode) }

    /// `vectorCacheHintSizeKB` in bytes: the bound on ``HNSWGraph/residentVectorBytes`` (see the file header).
    @_spi(Testing) public var vectorCacheByteBound: UInt64 { vectorCacheHintSizeKB &* 1024 }

    // MARK: JSON

    /// The option names, in the order ``jsonObject`` writes them.
    @_spi(Testing) public static let optionNames = ["dimensions", "neighborsPerNode", "indexingSearchCount", "distanceType",
                                                    "reparationBacklinkProbability", "vectorCacheHintSizeKB", "flags", "quantization"]

    /// Parameters read from a JSON object's members (as the model file keeps them); missing
    /// options take their defaults, `dimensions` is required. `flags` is an array of flag names
    /// or an integer of ObjectBox's bits. Throws `.schema` naming the option, what it must be
    /// and what it got; unknown options are refused too.
    @_spi(Testing) public init(json: [String: JSONValue]) throws {
        func fail(_ message: String) -> CellarError { .schema("HNSW index: \(message)") }
        for name in json.keys.sorted() where !Self.optionNames.contains(name) {
            throw fail("unknown option \"\(name)\" (known: \(Self.optionNames.joined(separator: ", ")))")
        }
        func integer(_ name: String, _ range: ClosedRange<UInt64>) throws -> UInt64? {
            guard let value = json[name] else { return nil }
            let expected = "\"\(name)\" must be an integer from \(range.lowerBound) to \(range.upperBound)"
            guard case .number(let text) = value else { throw fail("\(expected), got \(describeJSON(value))") }
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = UInt64(text),
                  range.contains(number) else {
                throw fail("\(expected), got \(text)")
            }
            return number
        }
        guard json["dimensions"] != nil else { throw fail("\"dimensions\" is required (an integer from 1 to \(Self.dimensionsRange.upperBound))") }
        let dimensions = Int(try integer("dimensions", 1...UInt64(Self.dimensionsRange.upperBound))!)
        let m = try integer("neighborsPerNode", 2...UInt64(Self.neighborsPerNodeRange.upperBound))
        let ef = try integer("indexingSearchCount", 1...UInt64(Self.indexingSearchCountRange.upperBound))
        let cache = try integer("vectorCacheHintSizeKB", Self.vectorCacheHintSizeKBRange)
        /// The case of `T` named by option `name`, nil when the option is absent.
        func named<T: RawRepresentable & CaseIterable>(_ name: String, _ type: T.Type) throws -> T? where T.RawValue == String {
            guard let value = json[name] else { return nil }
            guard case .string(let text) = value, let chosen = T(rawValue: text) else {
                let names = T.allCases.map(\.rawValue).joined(separator: ", ")
                throw fail("\"\(name)\" must be one of \(names), got \(describeJSON(value))")
            }
            return chosen
        }
        let distance = try named("distanceType", VectorDistanceType.self) ?? .euclidean
        var probability = 1.0
        if let value = json["reparationBacklinkProbability"] {
            let expected = "\"reparationBacklinkProbability\" must be a number from 0 to 1"
            guard case .number(let text) = value else { throw fail("\(expected), got \(describeJSON(value))") }
            guard let number = Double(text), (0...1).contains(number) else { throw fail("\(expected), got \(text)") }
            probability = number
        }
        var flags: HNSWFlags = []
        if let value = json["flags"] {
            let names = HNSWFlags.named.map(\.name).joined(separator: ", ")
            switch value {
            case .array(let elements):
                for element in elements {
                    guard case .string(let name) = element, let flag = HNSWFlags.named.first(where: { $0.name == name })?.flag else {
                        throw fail("\"flags\" must hold flag names (\(names)), got \(describeJSON(element))")
                    }
                    flags.insert(flag)
                }
            case .number:
                let bits = try integer("flags", 0...15)!
                flags = HNSWFlags(rawValue: UInt32(bits))
            default:
                throw fail("\"flags\" must be an array of flag names (\(names)) or an integer from 0 to 15, got \(describeJSON(value))")
            }
        }
        let quantization = try named("quantization", HNSWQuantization.self) ?? HNSWQuantization.none
        do {
            try self.init(dimensions: dimensions, neighborsPerNode: m.map { Int($0) } ?? Self.defaultNeighborsPerNode,
                          indexingSearchCount: ef.map { Int($0) } ?? Self.defaultIndexingSearchCount,
                          distanceType: distance, reparationBacklinkProbability: probability,
                          vectorCacheHintSizeKB: cache ?? Self.defaultVectorCacheHintSizeKB, flags: flags,
                          quantization: quantization)
        } catch let error as CellarError {
            throw CellarError.schema(error.message)
        }
    }

    /// Parameters read from a JSON value that must be an object (see ``init(json:)-([String:JSONValue])``);
    /// a name given twice is refused.
    @_spi(Testing) public init(json: JSONValue) throws {
        guard case .object(let members) = json else {
            throw CellarError.schema("HNSW index: the options must be a JSON object, got \(describeJSON(json))")
        }
        var dictionary: [String: JSONValue] = [:]
        for member in members {
            guard dictionary.updateValue(member.value, forKey: member.name) == nil else {
                throw CellarError.schema("HNSW index: option \"\(member.name)\" is given twice")
            }
        }
        try self.init(json: dictionary)
    }

    /// Every option as a JSON object, in ``optionNames`` order, defaults included (so that a
    /// change of a default in a later version does not silently change a stored index), except
    /// `quantization`, written only when set. Flags are written as an array of names.
    @_spi(Testing) public var jsonObject: JSONValue {
        var members = [
            JSONMember("dimensions", .number(String(dimensions))),
            JSONMember("neighborsPerNode", .number(String(neighborsPerNode))),
            JSONMember("indexingSearchCount", .number(String(indexingSearchCount))),
            JSONMember("distanceType", .string(distanceType.rawValue)),
            JSONMember("reparationBacklinkProbability", .number(Self.numberText(reparationBacklinkProbability))),
            JSONMember("vectorCacheHintSizeKB", .number(String(vectorCacheHintSizeKB))),
            JSONMember("flags", .array(HNSWFlags.named.filter { flags.contains($0.flag) }.map { .string($0.name) })),
        ]
        if quantization != .none { members.append(JSONMember("quantization", .string(quantization.rawValue))) }
        return .object(members)
    }

    /// A probability's text: "1" and "0" for the ends, otherwise Swift's shortest round-tripping form.
    private static func numberText(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
