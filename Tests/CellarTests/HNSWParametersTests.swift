// HNSW index options: ObjectBox's defaults, parsing from the model file's JSON, the errors that
// name the option and its range, and the round trip through `jsonObject`.

@_spi(Testing) import Cellar
import Testing

@Suite struct HNSWParametersTests {
    func parse(_ members: [String: JSONValue]) throws -> HNSWParameters { try HNSWParameters(json: members) }

    func message(_ members: [String: JSONValue]) -> String? {
        do {
            _ = try parse(members)
            return nil
        } catch let error as CellarError {
            #expect(error.code == .schema)
            return error.message
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test func defaultsAreObjectBoxs() throws {
        let p = try parse(["dimensions": .number("128")])
        #expect(p.dimensions == 128)
        #expect(p.neighborsPerNode == 30)
        #expect(p.maxDegree(level: 0) == 60 && p.maxDegree(level: 3) == 30)
        #expect(p.indexingSearchCount == 100)
        #expect(p.distanceType == .euclidean)
        #expect(p.reparationBacklinkProbability == 1.0)
        #expect(p.vectorCacheHintSizeKB == 2_097_152)
        #expect(p.vectorCacheByteBound == 2_097_152 * 1024)
        #expect(p.flags == [])
        #expect(try HNSWParameters(dimensions: 128) == p)
    }

    @Test func everyOptionParsesAndRoundTrips() throws {
        let p = try parse([
            "dimensions": .number("3"), "neighborsPerNode": .number("16"), "indexingSearchCount": .number("200"),
            "distanceType": .string("dotProductNonNormalized"), "reparationBacklinkProbability": .number("0.25"),
            "vectorCacheHintSizeKB": .number("1024"), "flags": .array([.string("debugLogs"), .string("reparationLimitCandidates")]),
        ])
        #expect(p.neighborsPerNode == 16 && p.indexingSearchCount == 200)
        #expect(p.distanceType == .dotProductNonNormalized && p.reparationBacklinkProbability == 0.25)
        #expect(p.vectorCacheHintSizeKB == 1024 && p.flags == [.debugLogs, .reparationLimitCandidates])
        #expect(try HNSWParameters(json: p.jsonObject) == p)
        #expect(try parse(["dimensions": .number("3"), "flags": .number("12")]).flags == [.vectorCacheSimdPaddingOff, .reparationLimitCandidates])
        for type in VectorDistanceType.allCases {
            let q = try HNSWParameters(dimensions: 2, distanceType: type, reparationBacklinkProbability: 0)
            #expect(try HNSWParameters(json: q.jsonObject) == q)
        }
        #expect(try HNSWParameters(dimensions: 4) != HNSWParameters(dimensions: 4, neighborsPerNode: 31))
        // Quantization: written only when set (a model without it reads as before), and a
        // different index when it changes.
        #expect(p.quantization == .none)
        guard case .object(let plain) = p.jsonObject else { Issue.record("not an object"); return }
        #expect(!plain.contains { $0.name == "quantization" })
        let q = try parse(["dimensions": .number("3"), "quantization": .string("int8")])
        let unquantized = try HNSWParameters(dimensions: 3)
        #expect(q.quantization == .int8 && q != unquantized)
        guard case .object(let members) = q.jsonObject else { Issue.record("not an object"); return }
        #expect(members.last?.name == "quantization")
        #expect(try HNSWParameters(json: q.jsonObject) == q)
        #expect(try parse(["dimensions": .number("3"), "quantization": .string("none")]) == unquantized)
    }

    @Test func badOptionsAreNamedWithTheirRange() throws {
        let d: [String: JSONValue] = ["dimensions": .number("8")]
        func with(_ name: String, _ value: JSONValue) -> [String: JSONValue] { d.merging([name: value]) { $1 } }
        let cases: [([String: JSONValue], [String])] = [
            ([:], ["dimensions", "required"]),
            (["dimensions": .number("0")], ["dimensions", "1 to 65536", "got 0"]),
            (["dimensions": .number("-3")], ["dimensions", "got -3"]),
            (["dimensions": .string("8")], ["dimensions", "the string"]),
            (with("neighborsPerNode", .number("1")), ["neighborsPerNode", "2 to 512"]),
            (with("neighborsPerNode", .number("513")), ["neighborsPerNode", "2 to 512"]),
            (with("indexingSearchCount", .number("0")), ["indexingSearchCount", "1 to 10000"]),
            (with("indexingSearchCount", .number("1.5")), ["indexingSearchCount", "got 1.5"]),
            (with("distanceType", .string("manhattan")), ["distanceType", "euclidean, cosine, dotProduct, dotProductNonNormalized, geo"]),
            (with("reparationBacklinkProbability", .number("1.5")), ["reparationBacklinkProbability", "0 to 1"]),
            (with("reparationBacklinkProbability", .bool(true)), ["reparationBacklinkProbability", "true"]),
            (with("vectorCacheHintSizeKB", .number("0")), ["vectorCacheHintSizeKB", "from 1"]),
            (with("flags", .array([.string("fast")])), ["flags", "debugLogs, debugLogsDetailed, vectorCacheSimdPaddingOff, reparationLimitCandidates"]),
            (with("flags", .number("16")), ["flags", "0 to 15"]),
            (with("neighbours", .number("3")), ["unknown option", "neighbours"]),
            (["dimensions": .number("1"), "distanceType": .string("geo")], ["at least 2", "geo"]),
            (with("quantization", .string("int4")), ["quantization", "none, int8", "int4"]),
            (with("quantization", .bool(true)), ["quantization", "none, int8"]),
            (["dimensions": .number("2"), "distanceType": .string("geo"), "quantization": .string("int8")], ["quantization int8", "geo"]),
        ]
        for (members, words) in cases {
            let text = message(members)
            #expect(text != nil, "\(members) was accepted")
            for word in words { #expect(text?.contains(word) == true, "\(text ?? "nil") lacks \(word)") }
        }
        #expect(throws: CellarError.self) { try HNSWParameters(dimensions: 0) }
        do {
            _ = try HNSWParameters(dimensions: 4, neighborsPerNode: 1000)
        } catch let error as CellarError {
            #expect(error.code == .illegalArgument && error.message.contains("neighborsPerNode"))
        }
        let twice = JSONValue.object([JSONMember("dimensions", .number("2")), JSONMember("dimensions", .number("3"))])
        #expect(throws: CellarError.self) { try HNSWParameters(json: twice) }
    }
}
