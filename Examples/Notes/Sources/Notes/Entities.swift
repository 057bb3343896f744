import Cellar
import Foundation

/// A person who writes notes.
final class Author: Entity {
    var id: Id = 0
    /// The author's own identity beside the id: `authors.get(primaryKey: "ada@example.com")`, and
    /// `put(_:mode: .upsert)` updates the author with that email instead of adding another.
    // cellar: primaryKey
    var email: String = ""
    var name: String = ""
    /// The notes whose `author` is this author: a backlink, read from the store when first used
    /// (not stored with the author).
    // cellar: backlink = "author"
    var notes: ToMany<Note> = nil

    required init() {}

    init(email: String, name: String) {
        self.email = email
        self.name = name
    }
}

/// Where a note stands. Stored as its raw value; a value the app does not know (written by a
/// newer version) or a missing one (a note written before `status` existed) reads as `.unknown`.
enum Status: Int {
    case unknown = 0
    case open = 1
    case done = 2
}

/// A color kept as a hex string through a custom converter.
struct Color: Equatable, CustomStringConvertible {
    var hex: String
    static let black = Color(hex: "#000000")
    var description: String { hex }
}

enum ColorConverter {
    static func convert(_ color: Color) -> String { color.hex }
    static func convert(_ hex: String?) -> Color { hex.map(Color.init(hex:)) ?? .black }
}

/// A file attached to a note. An embedded type: it has no id and no box of its own, lives inside
/// its note's record, is read and written with it and is gone with it
/// (`Note.attachments.name.endsWith(".pdf")` queries the attachments of every note).
// cellar: embedded
struct Attachment: Equatable {
    var name: String = ""
    var bytes: Int = 0
    /// Indexed: `Note.attachments.kind == "image"` takes its candidates from the index.
    // cellar: index
    var kind: String = ""
}

/// Where a note was written: one embedded object, optional.
// cellar: embedded
struct Place: Equatable {
    var city: String = ""
    var latitude: Double = 0
    var longitude: Double = 0
}

final class Note: Entity {
    var id: EntityId<Note> = 0
    var title: String = ""
    /// Optional: stored as absent when nil. Its words are in a full-text index (`matches`).
    // cellar: index = "fulltext"
    var text: String?
    /// Now for a new note; notes stored before the property existed read 1970-01-01.
    // cellar: default = 0
    var creationDate: Date = Date()
    var author: ToOne<Author> = nil
    // cellar: convert = { "default": ".unknown" }
    var status: Status = .unknown
    // cellar: convert = { "dbType": "String", "converter": "ColorConverter" }
    var color: Color = .black
    /// Tags, with an index that holds each tag: `Note.tags.contains("home")` reads the index.
    // cellar: index
    var tags: [String] = []
    /// Free-form attributes, queried by key: `Note.attributes["place"] == "kitchen"`.
    var attributes: [String: String] = [:]
    /// Files attached to the note (embedded objects, in the note's record).
    var attachments: [Attachment] = []
    /// Where the note was written, when known.
    var place: Place?
    /// A small embedding of the note's meaning (a real app gets one from a model): food, work,
    /// errands, leisure. Searched by nearness through an HNSW index; empty means none.
    // cellar: hnsw = { "dimensions": 4, "distanceType": "cosine" }
    var embedding: [Float] = []
    // cellar: transient
    var cachedPreview: String = ""

    required init() {}

    init(title: String, text: String?, author: Author, status: Status, color: Color, tags: [String] = [],
         attributes: [String: String] = [:], attachments: [Attachment] = [], place: Place? = nil, embedding: [Float] = []) {
        self.title = title
        self.text = text
        self.author = ToOne(targetId: author.id)
        self.status = status
        self.color = color
        self.tags = tags
        self.attributes = attributes
        self.attachments = attachments
        self.place = place
        self.embedding = embedding
    }
}

/// A read-only view of a note: only these fields are read from the record, no `Note` is built
/// (`query.find(as: NoteHeadline.self)`).
// cellar: projection = "Note"
struct NoteHeadline {
    var id: EntityId<Note>
    var title: String
    var tags: [String]
    /// A path into the embedded place (nil when the note has none).
    // cellar: from = "place.city"
    var city: String?
}
