import Cellar

// The full-text benchmark's entities as an app declares them; their binding and
// `model-fts-bench.json` come from cellar-generator (run from the repository's root after changing
// them; Benchmarks/README.md, "Generated bindings", gives the command).

/// A document whose text is in a full-text index: the store the timed steps run on.
struct Doc: Entity, Equatable {
    var id: Id = 0
    // cellar: index = "fulltext"
    var text: String = ""
}

/// The same document without the index: a second store holding the same texts as `PlainDoc`s is
/// the baseline the index's size is measured against.
struct PlainDoc: Entity, Equatable {
    var id: Id = 0
    var text: String = ""
}
