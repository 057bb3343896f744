@_spi(CellarGenerated) import Cellar
import Foundation
import Testing

/// Bugs FuzzEmbedded found in embedded objects, each with the input that showed it.
@Suite struct EmbeddedFuzzRegressionTests {
    /// An empty list of embedded objects at the deepest level nests no record, so a value
    /// `Model.maxEmbeddingDepth` levels deep whose deepest object has an empty list is stored
    /// (the reader and `verify` accept its record); the writer refused it, asking for a nested
    /// builder one level too deep before it knew the list was empty.
    @Test func anEmptyListAtTheDeepestLevelIsWritten() throws {
        let store = try Store(directoryPath: "memory:embedded-fuzz-deepest", model: treeModel())
        let trees = store.box(for: ETree.self)
        let deepest = ETree(ENode.chain(Model.maxEmbeddingDepth))
        try trees.put(deepest)
        #expect(try trees.get(deepest.id)?.root == deepest.root)

        // A record of an embedded type on its own: the outermost record and 64 levels below it.
        let builder = RecordBuilder()
        builder.begin(slotCount: ENode.embeddedBinding.slotCount)
        try ENode.embeddedBinding.write(ENode.chain(Model.maxEmbeddingDepth + 1), to: builder)
        let reader = try RecordReader(builder.bytes)
        try reader.verify(try #require(treeModel().entity(named: "ENode")), in: treeModel())
        #expect(try ENode.embeddedBinding.read(from: reader) == ENode.chain(Model.maxEmbeddingDepth + 1))

        // One level more is still refused, and nothing is stored.
        #expect(throws: CellarError.self) { try trees.put(ETree(ENode.chain(Model.maxEmbeddingDepth + 1))) }
        #expect(try trees.count() == 1)
    }
}
