// The example app: opens its store (created on first run), writes an author and some notes,
// reads them back and prints what it did. Run it again and it adds to the same store.
import Cellar
import Foundation

let directory = CommandLine.arguments.dropFirst().first ?? "notes-example-db"
// `Store(directoryPath:)` is generated: it passes the model kept in model-Notes.json.
let store = try Store(directoryPath: directory)
print("opened \(directory): \(store.modelChanges.isEmpty ? "model unchanged" : store.modelChanges.map(\.description).joined(separator: ", "))")

let authors = store.box(for: Author.self)
let notes = store.box(for: Note.self)

// One transaction: an author and three notes, all or nothing. The author is identified by her
// email (a primary key): the upsert finds her on the next run and keeps her id.
let ada = Author(email: "ada@example.com", name: "Ada")
try store.runInTransaction {
    try authors.put(ada, mode: .upsert)
    try notes.put([
        Note(title: "Shopping", text: "cheese, bread", author: ada, status: .open, color: Color(hex: "#ffcc00"),
             tags: ["home", "food"], attributes: ["shop": "market"],
             place: Place(city: "Lyon", latitude: 45.76, longitude: 4.84), embedding: [0.8, 0.0, 0.6, 0.0]),
        Note(title: "Work", text: nil, author: ada, status: .done, color: .black, tags: ["work"],
             attachments: [Attachment(name: "plan.pdf", bytes: 48_213, kind: "document"),
                           Attachment(name: "board.png", bytes: 912_004, kind: "image")], embedding: [0.0, 1.0, 0.1, 0.0]),
        Note(title: "Shopping again", text: "more cheese", author: ada, status: .open, color: Color(hex: "#00aaff"),
             tags: ["food"], attributes: ["shop": "deli", "when": "friday"], embedding: [0.9, 0.0, 0.2, 0.3]),
    ])
}
print("put author \(ada.id) and 3 notes: \(try authors.count()) authors, \(try notes.count()) notes stored")

// Reads: a query on the property constants the generator wrote (an enum is compared by its
// stored raw value), and the author's notes through the backlink `Author.notes`.
let open = try notes.query { Note.status == .open && Note.title.startsWith("Shop") }
    .ordered(by: Note.creationDate)
    .build()
    .find()
print("open notes starting with \"Shop\": \(open.count)")
for note in open.suffix(2) {
    print("  #\(note.id) \(note.title): \(note.text ?? "-"), color \(note.color), by \(note.author.target?.name ?? "nobody")")
}
if let reread = try authors.get(ada.id) {
    print("\(reread.name)'s notes (the backlink Author.notes): \(reread.notes.map(\.title).joined(separator: ", "))")
}
// Full-text search: the words of the notes' text, in any case and with or without accents;
// `-word` excludes, `word*` is a prefix; results ranked by relevance (BM25).
let cheese = try notes.query { Note.text.matches("cheese -bread") }.ordered(byRelevanceTo: Note.text).build()
print("notes about cheese without bread: \(try cheese.find().map(\.title)); with a word starting with \"bre\": \(try notes.query { Note.text.matches("bre*") }.build().count())")
// Semantic search: the notes nearest in meaning to "something to eat" (its embedding), with their
// cosine distance, through the HNSW index.
let hungry = try notes.query { Note.embedding.nearestNeighbors(to: [1, 0, 0.1, 0.1], maxCount: 2) }.build()
print("nearest to \"something to eat\": \(try hungry.findWithScores().map { "\($0.object.title) (\(String(format: "%.3f", $0.score)))" })")
// Lists and maps: `contains` on the indexed tag list reads the tag's index entries; a map is
// queried by key.
let food = try notes.query { Note.tags.contains("food") }.build()
let atTheDeli = try notes.query { Note.attributes["shop"] == "deli" }.build().count()
print("notes tagged food: \(try food.count()), first tags \(try food.find().first?.tags ?? []); notes for the deli: \(atTheDeli)")
// Embedded objects: conditions reach into them (a list: some attachment meets it; `any` asks one
// attachment to meet the whole block), and they come back with their note.
let withImages = try notes.query { Note.attachments.kind == "image" }.build()
let bigPDFs = try notes.query { Note.attachments.any { Attachment.name.endsWith(".pdf") && Attachment.bytes > 10_000 } }.build().count()
let inLyon = try notes.query { Note.place.city == "Lyon" }.build().count()
print("notes with an image: \(try withImages.count()) (attachments \(try withImages.find().first?.attachments.map(\.name) ?? [])); with a PDF over 10 kB: \(bigPDFs); written in Lyon: \(inLyon)")
// A primary key look-up, and a projection: titles and tags without building the notes.
print("by email: \(try authors.get(primaryKey: "ada@example.com")?.name ?? "nobody")")
let headlines = try notes.query { Note.tags.contains("food") }.build().find(as: NoteHeadline.self)
for headline in headlines.prefix(2) {
    print("  headline #\(headline.id.value) \(headline.title) \(headline.tags) in \(headline.city ?? "-")")
}
print("property constants for queries: \(Note.title), \(Note.status) (stored as \(Note.status.type))")

// Live results: the open notes, kept up to date after each commit, with exactly which rows came,
// went or changed (an app's list animates those rows; a SwiftUI view reads `live`, a collection).
// Published on a queue of our own here (an app uses the main queue, the default).
let liveQueue = DispatchQueue(label: "notes.live")
let live = try store.liveQuery(try notes.query { Note.status == .open }.build(), queue: liveQueue)
func waitForUpdate(after count: Int) {
    // A commit that changes the open notes publishes an update soon after; a minute without one
    // is a fault, not a slow machine.
    let deadline = Date().addingTimeInterval(60)
    while liveQueue.sync(execute: { live.updateCount }) <= count {
        guard Date() < deadline else {
            print("the live query published no update after its update \(count)")
            exit(1)
        }
        usleep(1_000)
    }
}
func printChange(_ what: String) {
    liveQueue.sync {
        let change = live.lastChange!
        print("  \(what): \(live.results.count) open; deleted rows \(change.deletions), inserted \(change.insertions), modified \(change.modifications)")
    }
}
waitForUpdate(after: 0)
printChange("live open notes, first result")
// The newest open note (this run's "Shopping again"): a text it never had, so that the put
// changes it on every run of the example, not only on the first.
let edited = open.last!
edited.text = (edited.text ?? "") + ", olives"
try notes.put(edited)
waitForUpdate(after: 1)
printChange("a note's text edited")
let errand = Note(title: "Errand", text: "post office", author: ada, status: .open, color: .black)
try notes.put(errand)
waitForUpdate(after: 2)
printChange("a note added")
errand.status = .done
try notes.put(errand)
waitForUpdate(after: 3)
printChange("that note done")
live.cancel()
store.close()
