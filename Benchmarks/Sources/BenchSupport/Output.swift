import Foundation

/// `1234567` as `1,234,567`.
public func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var out = ""
    for (i, ch) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(ch)
    }
    return value < 0 ? "-" + out : out
}

/// Operations per second for the progress lines: grouped, from 10 million on in millions (`37.7M`).
public func formatRate(_ r: Double) -> String {
    r >= 10_000_000 ? String(format: "%.1fM", r / 1e6) : grouped(Int(r.rounded()))
}

/// The progress line of one run of one engine (or way) on standard error, once its checks passed:
/// `run 1/3 name: a 123,456/s  b 2.1M/s ...  (checks passed)`.
public func logRun(_ run: Int, of runs: Int, _ name: String, rates: [(step: String, opsPerSecond: Double)]) {
    log("run \(run + 1)/\(runs) \(name): " + rates.map { "\($0.step) \(formatRate($0.opsPerSecond))/s" }.joined(separator: "  ")
        + "  (checks passed)")
}

/// How the table's medians were taken: `median of 3 runs` or `1 run`.
public func runsPhrase(_ runs: Int) -> String {
    runs > 1 ? "median of \(runs) runs" : "1 run"
}

/// A `--format tsv` line of results: `name step n ops_per_s seconds`.
public func tsvLine(_ name: String, _ step: String, _ n: Int, opsPerSecond: Double, seconds: Double) -> String {
    "\(name)\t\(step)\t\(n)\t\(String(format: "%.1f", opsPerSecond))\t\(String(format: "%.6f", seconds))"
}

/// A `--format tsv` line of a ratio: `label step n ratio 0`.
public func tsvRatioLine(_ label: String, _ step: String, _ n: Int, _ ratio: Double) -> String {
    "\(label)\t\(step)\t\(n)\t\(String(format: "%.3f", ratio))\t0"
}

/// A table on standard output: the first column left-aligned, the others right-aligned.
public func printTable(header: [String], rows: [[String]]) {
    let all = [header] + rows
    let widths = (0..<header.count).map { c in all.map { $0[c].count }.max()! }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { c, cell in
            let pad = String(repeating: " ", count: widths[c] - cell.count)
            return c == 0 ? cell + pad : pad + cell
        }.joined(separator: "   ")
    }
    print(line(header))
    print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "   "))
    for row in rows { print(line(row)) }
}
