import PostgresNIO

/// Rows as the server sent them, every cell's bytes one after another in one buffer. A pull
/// reads tens of thousands of cells a batch: a `String` for each cost an allocation (and its
/// release), where here they cost two growing arrays.
struct CellBuffer: Sendable {
    /// The cells a row has.
    let columns: Int
    /// Every cell's bytes, row after row.
    private var bytes: [UInt8] = []
    /// Each cell, row after row: where its bytes start in `bytes`, and how many there are
    /// (-1: NULL).
    private var cells: [(start: Int, count: Int)] = []

    init(columns: Int) { self.columns = columns }

    /// The number of rows.
    var count: Int { cells.count / columns }
    var isEmpty: Bool { cells.isEmpty }

    /// Appends `row`'s cells, as bytes; a row with another number of cells is refused.
    mutating func append(_ row: PostgresRow) throws {
        guard row.count == columns else { throw SyncError(.schema, "the server sent a row of \(row.count) cells, where \(columns) were asked for") }
        for cell in row {
            guard let value = cell.bytes else {
                cells.append((0, -1))
                continue
            }
            cells.append((bytes.count, value.readableBytes))
            value.withUnsafeReadableBytes { bytes.append(contentsOf: $0) }
        }
    }

    /// Calls `body` with the cells: `cell(row, column)` is that cell's bytes (nil: NULL), valid
    /// within `body`.
    func withCells<R>(_ body: (_ cell: (Int, Int) -> UnsafeBufferPointer<UInt8>?) throws -> R) rethrows -> R {
        try bytes.withUnsafeBufferPointer { base in
            try body { row, column in
                let cell = cells[row * columns + column]
                guard cell.count >= 0 else { return nil }
                return UnsafeBufferPointer(rebasing: base[cell.start..<(cell.start + cell.count)])
            }
        }
    }
}
