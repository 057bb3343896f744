@_spi(Tools) import Cellar
import CellarStorage
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `cellar export`: every object of the store in `directory` (of `entity` only, when given) into
/// the JSON-lines file at `path` (`-`: standard output), from one snapshot. Prints what it wrote
/// on standard error.
func export(_ directory: String, entity: String?, to path: String, options: StorageOptions) throws {
    let engine = try StorageEngine(directory: directory, options: options)
    defer { engine.close() }
    let bar = ProgressBar("exporting")
    let report = try ObjectExport.export(engine, entity: entity, to: path) { bar.update($0, of: $1) }
    bar.finish()
    printError("exported \(ProgressBar.grouped(report.objects)) objects (\(ProgressBar.grouped(report.bytes)) bytes) to \(path == "-" ? "standard output" : path)")
}

/// `cellar import`: the export file at `path` (`-`: standard input) into the store in `directory`
/// (created when missing), `batchSize` objects a transaction.
func importObjects(into directory: String, from path: String, batchSize: Int, key: EncryptionKey?) throws {
    let bar = ProgressBar("importing (bytes)")
    let report = try ObjectImport.importFile(path, into: directory, options: StoreOptions(encryptionKey: key), batchSize: batchSize) {
        bar.update($0, of: max($1, $0))
    }
    bar.finish()
    printError("imported \(ProgressBar.grouped(report.objects)) objects from \(report.lines) lines in \(report.batches) transactions into \(directory)")
}

/// A line on standard error (standard output may be the export itself).
private func printError(_ line: String) {
    fputs(line + "\n", stderr)
}
