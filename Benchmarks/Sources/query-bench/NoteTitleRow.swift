import BenchNote
@_spi(CellarGenerated) import Cellar

// A two-field projection of `Note` for steps f and fp, with its binding written by hand the way
// the generator writes one for `// cellar: projection = "Note"` (BenchNote's Note binding is
// hand-written too, so the generator is not run in this package).

/// `Note`'s title and author, read without building a `Note`.
struct NoteTitleRow: Equatable {
    var title: String
    var author: UInt64
}

extension NoteTitleRow: Cellar.Projection {
    static let projectionBinding = NoteTitleRowCellarProjectionBinding()
}

/// Reads `NoteTitleRow` views of `Note` records: slots 1, 5.
struct NoteTitleRowCellarProjectionBinding: Cellar.ProjectionBinding {
    typealias Projection = NoteTitleRow
    typealias EntityType = Note

    init() {}

    func read(id: Cellar.Id, from record: Cellar.RecordReader) throws -> NoteTitleRow {
        return NoteTitleRow(
            title: try record.string(slot: 1) ?? "",
            author: try record.read(UInt64.self, slot: 5) ?? 0
        )
    }
}
