/// Rewrites one value as compaction copies it: the new bytes, or nil to copy it as it is.
public typealias ValueRewrite = (UnsafeRawBufferPointer) throws -> [UInt8]?

/// Given a tree's name, how compaction rewrites its values; nil copies them as they are. The
/// object layer drops retired properties' fields this way. Keys never change.
public typealias CompactionRewrites = @Sendable (_ tree: String) -> ValueRewrite?
