// The HNSW index through a store's whole life: kill -9 while a child process inserts, updates and
// removes vectors (and compacts), an in-process compaction after churn, and observers of a
// nearest-neighbour query. After each kill the store must open, pass the full verification (the
// graph's invariants included), hold exactly the objects of the acknowledged commits (or of one
// more, in flight), and answer nearest-neighbour queries with existing objects only, with a
// recall@10 against brute force of at least 0.9.

@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Dispatch
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite(.serialized) struct VectorCrashTests {
    // MARK: The child process

    /// The crash child (and the `cellar` tool) sit next to the test binary in the build folder.
    static func builtProgram(_ name: String) -> String {
        let me = CommandLine.arguments[0]
        let folder = me.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return (folder.isEmpty ? "." : folder) + "/" + name
    }

    static var childPath: String { builtProgram("CellarVectorCrashChild") }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Starts `program` (the child unless told); returns its pid and the read end of its stdout
    /// pipe (non-blocking).
    static func spawn(_ arguments: [String], program: String = childPath) throws -> (pid: pid_t, output: Int32) {
        try ChildProcess.spawn(program, arguments)
    }

    /// Appends what the child wrote so far to `buffer`.
    static func drain(_ fd: Int32, into buffer: inout [UInt8]) { ChildProcess.drain(fd, into: &buffer) }

    static func lines(_ output: [UInt8]) -> [Substring] {
        String(decoding: output, as: UTF8.self).split(separator: "\n")
    }

    /// The highest `ack K` in `output`.
    static func acknowledged(_ output: [UInt8]) -> Int? { ChildProcess.acknowledged(output) }

    /// Starts the child and kills it with SIGKILL at a counted point (`ChildProcess.killPoint`:
    /// after 1 to 12 acknowledged commits, or, one round in eight, as soon as it says `opening`;
    /// with `inCompaction`, once it says `compacting`), then up to 20 ms later (a commit here
    /// takes milliseconds: the kills spread over it); returns all it printed and the
    /// acknowledgements the round waited for.
    static func runAndKill(_ arguments: [String], rng: inout SplitMix64, inCompaction: Bool) throws -> (output: [UInt8], waitedFor: Int) {
        let target = inCompaction ? 0 : ChildProcess.killPoint(&rng)
        let output = try ChildProcess.run(childPath, arguments, jitter: 20_000) { _, output in
            inCompaction ? Self.lines(output).contains("compacting") : ChildProcess.reached(target, in: output)
        }
        return (output, target)
    }

    /// Runs `cellar verify` on the closed store in `directory`; returns its exit status and output.
    static func cellarVerify(_ directory: String) throws -> (status: Int32, output: String) {
        let tool = try spawn(["verify", directory], program: builtProgram("cellar"))
        var output: [UInt8] = []
        var status: Int32 = 0
        var waited = 0
        while waitpid(tool.pid, &status, WNOHANG) != tool.pid {
            drain(tool.output, into: &output)
            usleep(2_000)
            waited += 2_000
            if waited > 30_000_000 { kill(tool.pid, SIGKILL) }
        }
        drain(tool.output, into: &output)
        close(tool.output)
        return (status, String(decoding: output, as: UTF8.self))
    }

    // MARK: Checks

    static func options() -> StoreOptions { StoreOptions(durability: .full, automaticCompaction: nil) }

    /// What `check` found.
    struct Checked {
        var commits: Int
        var recall: Double
        var nodes: Int
    }

    /// Opens the store in `directory` and checks it against the workload with `seed`: it holds
    /// the content after the transaction its progress names, which is `acknowledged` or one
    /// more; it verifies (records, and the HNSW graph's invariants); nearest-neighbour queries
    /// return existing objects with a vector, nearest first, with a recall@10 of at least 0.9.
    static func check(_ directory: String, seed: UInt64, acknowledged: Int, label: String) throws -> Checked {
        let store = try Store(directoryPath: directory, model: VectorWorkload.model(), options: options())
        defer { store.close() }
        let summary = try RecordCheck.verify(store.engine)
        let commits = Int(try store.box(for: VectorProgress.self).all().first?.commit ?? 0)
        #expect(commits == acknowledged || commits == acknowledged + 1,
                "\(label): the store holds \(commits) transactions; \(acknowledged) were acknowledged (seed \(seed))")
        let expected = VectorWorkload.state(after: commits, seed: seed)
        let docs = try store.box(for: VectorDoc.self).all()
        var content: VectorWorkload.State = [:]
        var byId: [Id: [Float]] = [:]
        for doc in docs {
            #expect(content[doc.key] == nil, "\(label): key \(doc.key) stored twice")
            content[doc.key] = doc.embedding ?? []
            if let vector = doc.embedding { byId[doc.id] = vector }
        }
        #expect(content == expected, "\(label): the content after \(commits) transactions differs: \(content.count) objects, \(expected.count) expected, \(Set(content.keys).symmetricDifference(expected.keys).count) keys differ (seed \(seed))")
        #expect(summary.indexEntries == byId.count, "\(label): \(summary.indexEntries) HNSW nodes for \(byId.count) objects with a vector")
        let recall = try searchRecall(store, byId, queries: VectorWorkload.queries(20, seed: seed), label: label)
        #expect(recall >= 0.9, "\(label): recall@10 \(recall) (seed \(seed))")
        return Checked(commits: commits, recall: recall, nodes: byId.count)
    }

    /// Runs a nearest-neighbour query for each of `queries`; checks that the hits are objects of
    /// `vectors` (id → vector), nearest first with their distances, as many as asked (or all);
    /// returns the mean recall@10 against brute force over `vectors`.
    static func searchRecall(_ store: Store, _ vectors: [Id: [Float]], queries: [[Float]], label: String) throws -> Double {
        let box = store.box(for: VectorDoc.self)
        var total = 0.0
        for vector in queries {
            let hits = try box.query { VectorDoc.embedding.nearestNeighbors(to: vector, maxCount: 10) }.build().findIdsWithScores()
            #expect(hits.count == min(10, vectors.count), "\(label): \(hits.count) hits among \(vectors.count) vectors")
            #expect(hits.map(\.score) == hits.map(\.score).sorted(), "\(label): hits not nearest first")
            for hit in hits {
                guard let found = vectors[hit.id.value] else {
                    Issue.record("\(label): the search returned object \(hit.id.value), which does not exist or has no vector")
                    continue
                }
                #expect(abs(hit.score - Double(VectorWorkload.distance(vector, found))) < 1e-4, "\(label): a wrong score")
            }
            let exact = vectors.map { ($0.key, VectorWorkload.distance(vector, $0.value)) }
                .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(10).map(\.0)
            total += exact.isEmpty ? 1 : Double(Set(hits.map(\.id.value)).intersection(exact).count) / Double(exact.count)
        }
        return total / Double(queries.count)
    }

    // MARK: kill -9

    @Test("kill -9 while vectors are inserted, updated, removed and compacted loses no acknowledged commit and leaves a valid graph")
    func killNineDuringVectorWrites() throws {
        let seed = SplitMix64.testSeed()
        var rng = SplitMix64(seed: seed)
        let directory = TestDirectory("vector-kill")
        defer { directory.remove() }
        var acknowledged = 0
        var inFlight: [VectorWorkload.Kind: Int] = [:]
        var compactions = 0, killedCompacting = 0
        var lowest = 1.0
        let kills = 24
        var nodes = 0
        var waitedFor = 0
        for round in 0..<kills {
            // Half the children also compact the open store after every 7th commit.
            let compactEvery = round % 2 == 1 ? "7" : "0"
            // A compacting child is killed during its first compaction every other time.
            let inCompaction = compactEvery != "0" && rng.next() % 2 == 0
            let (output, waited) = try Self.runAndKill([directory.path, String(seed), compactEvery], rng: &rng, inCompaction: inCompaction)
            waitedFor += waited
            let lines = Self.lines(output)
            #expect(!lines.contains { $0.hasPrefix("child error") }, "round \(round): \(lines.filter { $0.hasPrefix("child error") })")
            // A round that waited for commits or a compaction got past the open (one killed at
            // `opening` may not have).
            if waited > 0 || inCompaction {
                #expect(lines.contains { $0.hasPrefix("ready ") }, "round \(round): the child never opened the store")
            }
            compactions += lines.filter { $0 == "compacted" }.count
            if lines.last(where: { $0.hasPrefix("compact") }) == "compacting" { killedCompacting += 1 }
            if let k = Self.acknowledged(output) { acknowledged = max(acknowledged, k) }
            let checked = try Self.check(directory.path, seed: seed, acknowledged: acknowledged, label: "round \(round)")
            if checked.commits > acknowledged {
                let before = VectorWorkload.state(after: checked.commits - 1, seed: seed)
                inFlight[VectorWorkload.kind(of: checked.commits, state: before), default: 0] += 1
            }
            lowest = min(lowest, checked.recall)
            nodes = checked.nodes
            // The next child continues from the store's last commit.
            acknowledged = checked.commits
        }
        // The command-line tool's verification of the last store, the graph's invariants included.
        let verified = try Self.cellarVerify(directory.path)
        #expect(verified.status == 0 && verified.output.hasPrefix("ok:") && verified.output.contains(" \(nodes) index entries"), "cellar verify: status \(verified.status), \(verified.output)")
        #expect(acknowledged >= waitedFor && waitedFor > 0, "the children committed \(acknowledged) transactions, the rounds waited for \(waitedFor)")
        print("HNSW kill -9 (seed \(seed)): \(kills) kills, \(acknowledged) transactions, \(nodes) nodes at the end, reopened past the last acknowledgement \(inFlight.values.reduce(0, +)) times (\(inFlight.map { "\($0.key.rawValue) \($0.value)" }.sorted().joined(separator: ", "))), \(compactions) compactions, \(killedCompacting) kills during one, lowest recall@10 \(lowest)")
    }
}
