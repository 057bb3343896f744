/// What one run of one engine measured, and what it answered (compared between the engines).
struct RunResult {
    var seconds: [Step: Double] = [:]
    /// Bytes on disk after the insert: Cellar the log's length, SQLite the database and its -wal file.
    var bytes = 0
    var answers = Answers()
}

/// An engine's answers to the steps: each is also checked against the workload's expected ones
/// inside the engine's run; the harness then checks that both engines gave the same.
struct Answers: Equatable {
    /// The orders the get step built, summed.
    var got = Totals()
    /// The ids (ascending) each lookup of the sku and sku-qty steps found.
    var sku: [[Int64]] = []
    var skuQuantity: [[Int64]] = []
    /// After the remove: every stored order summed, and the sku lookups again.
    var final = Totals()
    var finalSku: [[Int64]] = []
}
