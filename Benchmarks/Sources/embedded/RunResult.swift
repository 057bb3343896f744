/// What one run of one engine measured, and what it answered (compared between the engines).
struct RunResult {
    var seconds: [Step: Double] = [:]
    /// Bytes on disk after the insert: Cellar the log's length, SQLite the database and its -wal file.
    var bytes = 0
    var answers = Answers()
}
