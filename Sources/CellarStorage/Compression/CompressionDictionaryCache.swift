/// The dictionaries an engine's write transactions compressed with, by id (ids are never reused,
/// so none goes stale). Owned by the engine, handed to each transaction's `TreeMutator`; only used
/// while the writer gate is held.
final class CompressionDictionaryCache {
    private var byId: [UInt32: CompressionDictionary] = [:]

    subscript(id: UInt32) -> CompressionDictionary? {
        get { byId[id] }
        set { byId[id] = newValue }
    }
}
