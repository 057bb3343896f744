import BenchSupport
import Foundation

/// `crud --update-pairs P --engines A,B`: what one of Cellar's options costs on step d, measured
/// on pairs. Each pair is two fresh stores, one as engine A opens it and one as B does (cellar,
/// cellar-history or cellar-undo), filled by step a (untimed), then step d in each, one after the
/// other, the order alternating from pair to pair. The ratio is taken within each pair (B's rate
/// over A's), so that a machine whose speed drifts between runs, as a shared one does, moves both
/// sides of a ratio together; reported are its median, quartiles and range over the pairs,
/// beside each engine's median rate.
enum UpdatePairs {
    static let engines = ["cellar", "cellar-history", "cellar-undo"]

    static func run(_ w: Workload, pairs: Int, engines: [String], parent: String, tsv: Bool) throws {
        guard engines.count == 2, engines.allSatisfy(Self.engines.contains) else {
            throw BenchError("--update-pairs compares two engines of \(Self.engines.joined(separator: ", ")): --engines A,B")
        }
        var rates: [[Double]] = [[], []], ratios: [Double] = []
        for pair in 0..<pairs {
            var rate = [0.0, 0.0]
            for side in pair % 2 == 0 ? [0, 1] : [1, 0] {
                let engine = engines[side]
                let folder = try makeTemporaryFolder(in: parent, prefix: "crud-pairs-\(engine)")
                defer { removeTree(folder) }
                let seconds = try CellarEngine.onlyStepD(w, folder: folder, history: engine != "cellar", undoable: engine == "cellar-undo")
                rate[side] = Double(w.n) / seconds
                rates[side].append(rate[side])
            }
            ratios.append(rate[1] / rate[0])
            log("pair \(pair + 1)/\(pairs): d \(engines[0]) \(grouped(Int(rate[0])))/s, \(engines[1]) \(grouped(Int(rate[1])))/s, ratio \(String(format: "%.3f", rate[1] / rate[0]))")
        }
        let n = w.n
        let label = "\(engines[1])/\(engines[0])"
        if tsv {
            for side in 0...1 {
                print(tsvLine(engines[side], "d", n, opsPerSecond: median(rates[side]), seconds: Double(n) / median(rates[side])))
            }
            for (suffix, p) in [("", 0.5), ("_q1", 0.25), ("_q3", 0.75), ("_min", 0), ("_max", 1)] {
                print(tsvRatioLine("pair_ratio\(suffix)", label, n, percentile(ratios, p)))
            }
            return
        }
        print("")
        print("Step d (update all, one txn), N = \(grouped(n)), \(pairs) pairs of fresh stores, alternated")
        print("  \(engines[0]): \(grouped(Int(median(rates[0]))))/s (median); \(engines[1]): \(grouped(Int(median(rates[1]))))/s")
        print(String(format: "  \(label), per pair: median %.3f, quartiles %.3f–%.3f, range %.3f–%.3f",
                     percentile(ratios, 0.5), percentile(ratios, 0.25), percentile(ratios, 0.75), percentile(ratios, 0), percentile(ratios, 1)))
    }
}
