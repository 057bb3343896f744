import Cellar

// The vector benchmark's entities as an app declares them; their binding and
// `model-vector-bench.json` come from cellar-generator (run from the repository's root after
// changing them; Benchmarks/README.md, "Generated bindings", gives the command). An HNSW index's
// parameters are fixed by its annotation, so each dimension count has an entity of its own; both
// keep ObjectBox's defaults otherwise (neighborsPerNode 30, indexingSearchCount 100).

/// A document with a 128-dimensional embedding in an HNSW index (cosine distance).
final class Doc128: Entity {
    var id: Id = 0
    // cellar: hnsw = { "dimensions": 128, "distanceType": "cosine" }
    var embedding: [Float] = []

    required init() {}

    init(_ embedding: [Float]) { self.embedding = embedding }
}

/// A document with a 384-dimensional embedding in an HNSW index (cosine distance).
final class Doc384: Entity {
    var id: Id = 0
    // cellar: hnsw = { "dimensions": 384, "distanceType": "cosine" }
    var embedding: [Float] = []

    required init() {}

    init(_ embedding: [Float]) { self.embedding = embedding }
}
