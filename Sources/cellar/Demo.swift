import Cellar

/// `cellar demo`: the object layer at work on a store of `DemoNote`s (a hand-written binding):
/// puts, reads, a transaction, a rollback.
func demo(_ directory: String) throws {
    // The store and its model: the first run creates both; later runs find them.
    let store = try Store(directoryPath: directory, model: DemoNote.model)
    print("opened the store in \(directory) (\(store.modelChanges.isEmpty ? "model unchanged" : "model: \(store.modelChanges.map(\.description).joined(separator: ", "))"))")
    let notes = store.box(for: DemoNote.self)

    // 10,000 notes in one transaction, durable when put returns; ids are assigned by put.
    let batch = (1...10_000).map { DemoNote(title: "Note \($0) of this run", text: $0 % 3 == 0 ? nil : "written by the Cellar demo", stars: Int32($0 % 6)) }
    let ids = try notes.put(batch)
    print("put \(ids.count) notes in one transaction: ids \(ids.first!)…\(ids.last!), \(try notes.count()) stored")

    // Reads: by id, and all of them (on one snapshot).
    if let first = try notes.get(ids[0]) {
        print("note \(first.id): \"\(first.title)\", text \(first.text.map { "\"\($0)\"" } ?? "nil"), \(first.stars) stars")
    }
    let fiveStars = try notes.all().filter { $0.stars == 5 }.count
    print("read all: \(fiveStars) notes have five stars")

    // A transaction: everything in it, or nothing.
    try store.runInTransaction {
        for note in batch.prefix(100) {
            note.stars = 5
            try notes.put(note)
        }
        try notes.remove(Array(ids.suffix(5_000)).map(\.value))
    }
    print("one transaction: gave 100 notes five stars, removed 5,000: \(try notes.count()) stored")
    struct Undo: Error {}
    _ = try? store.runInTransaction {
        try notes.removeAll()
        throw Undo()
    }
    print("a transaction that threw rolled back its removeAll: still \(try notes.count()) stored; run the demo again to add more")
    store.close()
}
