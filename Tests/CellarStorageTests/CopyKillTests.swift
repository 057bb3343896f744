import CellarStorage
import CellarTestSupport
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// kill -9 in the middle of a copy (`StorageEngine.writeCopy`): the store copied from is untouched,
/// the target does not exist (only its `.partial` does), and the next copy to the same target
/// removes the leftover and writes a whole copy.
@Suite struct CopyKillTests {
    @Test("kill -9 at a counted point of a copy leaves no target, an intact store, and a next copy that succeeds")
    func killDuringACopy() throws {
        let directory = TestDirectory("copy-kill")
        defer { directory.remove() }
        let source = directory.sub("store")
        var model = Model()
        do {
            let engine = try StorageEngine(directory: source, options: StorageOptions(durability: .none))
            for k in 1...400 {
                let transaction = CrashWorkload.transaction(k, seed: 11)
                try engine.write { try apply(transaction, to: $0) }
                model.apply(transaction)
            }
            engine.close()
        }
        let total = model.trees.values.reduce(0) { $0 + $1.count }
        var random = SplitMix64(seed: 52)
        var partials = 0
        for round in 0..<4 {
            let target = directory.sub("copy\(round)")
            let killAt = 1 + Int(random.next() % UInt64(total - 1))
            let child = try ChildProcess.spawn(KillTests.childPath, [source, "0", "copy", target, String(killAt)])
            var output: [UInt8] = []
            var status: Int32 = 0
            // Read until the child's output closes (it killed itself, or ended), then reap it.
            _ = ChildProcess.wait(for: { _ in false }, on: child.output, into: &output)
            waitpid(child.pid, &status, 0)
            close(child.output)
            #expect(status & 0x7f == SIGKILL, "round \(round): the child was not killed: \(String(decoding: output, as: UTF8.self))")
            #expect(!TestDirectory.exists(target), "round \(round): the target exists after a kill mid-copy")
            if TestDirectory.exists(target + ".partial") { partials += 1 }
            // The store copied from holds what it held; a copy to the same target now succeeds.
            let engine = try StorageEngine(directory: source, options: StorageOptions(durability: .none))
            #expect(try engine.read { try Model(reading: $0) } == model, "round \(round): the store changed")
            try engine.writeCopy(to: target)
            engine.close()
            #expect(!TestDirectory.exists(target + ".partial"))
            let copy = try StorageEngine(directory: target, options: StorageOptions(durability: .none))
            #expect(try copy.read { try Model(reading: $0) } == model, "round \(round): the copy differs")
            copy.close()
        }
        #expect(partials > 0, "no kill landed while the copy was written")
    }
}
