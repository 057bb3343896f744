/// When a write transaction stops offering a tree's small values to zstd (see
/// `WriteTransaction.compressed`).
enum CompressionSampling {
    static let smallValue = 1 << 10
    static let giveUpAfter = 32
    static let retryEvery = 64
}
