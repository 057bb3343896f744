/// What a compaction did.
public struct CompactionReport: Sendable, CustomStringConvertible {
    /// The log's length before and after (the data file without the zeros written ahead of it).
    public let bytesBefore: UInt64
    /// The log's length after the compaction: the compacted file.
    public let bytesAfter: UInt64
    /// The newest transaction in the compacted file; the next commit follows it.
    public let transactionId: UInt64
    /// Wall-clock milliseconds, from the start to the swap.
    public let milliseconds: UInt64
    /// The longest time compaction held the writer lock, in microseconds: what a write
    /// transaction starting at the worst moment waited for it. Readers never wait.
    public let longestWriterWaitMicroseconds: UInt64
    /// How many times compaction brought in what writers changed while it copied (the last one
    /// under the writer lock).
    public let catchUpRounds: Int

    /// A one-line summary: the bytes before and after, the duration, the longest writer wait and the
    /// catch-up rounds.
    public var description: String {
        "compacted \(bytesBefore) → \(bytesAfter) bytes (transaction \(transactionId)) in \(milliseconds) ms; "
            + "writers waited at most \(Double(longestWriterWaitMicroseconds) / 1000) ms; \(catchUpRounds) catch-up rounds"
    }
}
