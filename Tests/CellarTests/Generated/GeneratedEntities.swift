import Cellar
import Foundation

// Entities whose bindings the generator writes (EntityInfo-CellarTests.generated.swift, next to
// this file, with model-CellarTests.json). The generator's golden test regenerates them and
// compares; GeneratedBindingTests stores and reads them through the generated code. After a
// change here, run:
//   swift run cellar-generator --target CellarTests --sources Tests/CellarTests/Generated \
//     --model Tests/CellarTests/Generated/model-CellarTests.json \
//     --output Tests/CellarTests/Generated/EntityInfo-CellarTests.generated.swift

enum Priority: Int32 {
    case unknown = 0
    case low = 1
    case high = 2
}

enum Mood: String {
    case calm
    case busy
}

struct Temperature: Equatable {
    var celsius: Double
    /// What a missing value reads as, through `TemperatureConverter`.
    static let unknown = Temperature(celsius: -999)
}

/// Takes an optional: gets nil for a missing value.
enum TemperatureConverter {
    static func convert(_ temperature: Temperature) -> Double { temperature.celsius }
    static func convert(_ celsius: Double?) -> Temperature { celsius.map(Temperature.init(celsius:)) ?? .unknown }
}

/// Takes a non-optional: gets 0 for a missing value.
enum StrictTemperatureConverter {
    static func convert(_ temperature: Temperature) -> Double { temperature.celsius }
    static func convert(_ celsius: Double) -> Temperature { Temperature(celsius: celsius) }
}

final class Ticket: Entity {
    var id: Id = 0
    // cellar: name = "headline"
    var title: String = ""
    // cellar: convert = { "default": ".unknown" }
    var priority: Priority = .unknown
    // cellar: convert = {}
    var mood: Mood?
    // cellar: convert = { "dbType": "Double", "converter": "TemperatureConverter" }
    var temperature: Temperature = Temperature(celsius: 20)
    // cellar: convert = { "dbType": "Double", "converter": "StrictTemperatureConverter" }
    var strictTemperature: Temperature = Temperature(celsius: 20)
    // cellar: date-nano
    var precise: Date = Date(timeIntervalSince1970: 0)
    var due: Date?
    var count: UInt16 = 0
    var tiny: Int8?
    // cellar: transient
    var scratch = "not stored"
    /// A standalone many-to-many relation (not a record slot): relation "tags" in the model.
    var tags: ToMany<Tag> = nil
    /// The comments whose `ticket` points at this ticket (the backlink of `Comment.ticket`).
    // cellar: backlink = "ticket"
    var comments: ToMany<Comment> = nil

    required init() {}
}

/// The target of `Ticket.tags`.
final class Tag: Entity {
    var id: Id = 0
    var name: String = ""
    /// The tickets whose `tags` hold this tag (the backlink of the relation `Ticket.tags`).
    // cellar: backlink = "tags"
    var tickets: ToMany<Ticket> = nil

    required init() {}

    init(name: String) {
        self.name = name
    }
}

/// Points at its ticket through a ToOne (`Ticket.comments` is its backlink).
final class Comment: Entity {
    var id: Id = 0
    var text: String = ""
    var ticket: ToOne<Ticket> = nil

    required init() {}

    init(text: String) {
        self.text = text
    }
}

/// UUIDs: one unique (a value index on its 16 bytes), one optional and indexed; and decimals.
final class Device: Entity {
    var id: Id = 0
    // cellar: unique
    // cellar: default = "00000000-0000-0000-0000-000000000000"
    var id2: UUID = UUID()
    // cellar: index
    var ref: UUID?
    var name: String = ""
    /// Decimals: an indexed price and an optional balance, whose initial value's literal the
    /// generated code repeats.
    // cellar: index
    var price: Decimal = 0
    var balance: Decimal? = nil
    var fee: Decimal = Decimal(string: "0.10")!

    required init() {}
}

struct Reading: Entity, Equatable {
    var id: EntityId<Reading> = 0
    var value: Double = 0
    var label: String?
    var bytes: [UInt8] = []
    var blob: Data?
    var flag: Bool = false
}

/// Lists, sets and maps of every element kind: an indexed tag list (a value index on its
/// strings), a hash-indexed list of strings, an indexed set of numbers, optional collections (nil
/// differs from empty), dates in nanoseconds and Flex values.
final class Post: Entity {
    var id: Id = 0
    var title: String = ""
    // cellar: index
    var tags: [String] = []
    // cellar: index = "hash"
    var topics: [String] = []
    var scores: [Int] = []
    // cellar: index
    var labels: Set<Int32> = []
    var flags: [Bool] = []
    var ratios: [Double] = []
    var weights: Set<Float> = []
    var shorts: [UInt16] = []
    var bytes: [Int8] = []
    var stamps: [Date] = []
    // cellar: date-nano
    var nanoStamps: [Date] = []
    var blobs: [Data] = []
    // cellar: index
    var refs: [UUID] = []
    var attributes: [String: String] = [:]
    var measures: [String: Double] = [:]
    var notes: [String]?
    var counts: [String: Int]?
    var ids: Set<UUID>?
    var payload: FlexValue = .null
    var extra: FlexValue?

    required init() {}
}

/// Default values: a record written before a property existed reads the property's initial value
/// (or its `default` annotation) instead of the zero value (DefaultValueTests). Version 1 of the
/// entity had only `title`.
final class Reminder: Entity {
    var id: Id = 0
    var title: String = ""
    var priority: Int = 3
    var label = "x"
    var due = Date(timeIntervalSince1970: 1_700_000_000.5)
    var active = true
    var ratio: Float = 0.25
    // cellar: default = "2024-01-01T00:00:00Z"
    var created: Date = Date()
    /// No initial value: the zero value, as before.
    var count: Int32
    /// Optional: nil, whatever it starts as.
    var note: String? = "new"
    /// Indexed, with defaults: a query condition the default meets is answered by a scan.
    // cellar: index
    var rank: Int32 = 7
    // cellar: index
    var tag = "x"

    required init() {
        count = 0
    }
}

/// A primary key: `email` identifies the account for `get(primaryKey:)` and upserts, beside its
/// id; `favorites` is a relation an upsert must keep, and the index over name and visits one it
/// must keep up to date.
// cellar: index = ["name", "visits"]
final class Account: Entity {
    var id: Id = 0
    // cellar: primaryKey
    var email: String = ""
    var name: String = ""
    var visits: Int = 0
    var favorites: ToMany<Tag> = nil

    required init() {}

    init(email: String, name: String, visits: Int = 0) {
        self.email = email
        self.name = name
        self.visits = visits
    }
}

/// An optional UUID primary key on a struct.
struct Badge: Entity, Equatable {
    var id: EntityId<Badge> = 0
    // cellar: primaryKey
    var code: UUID?
    var label: String = ""
}

/// An integer primary key (a value index), beside another index an upsert must keep up to date.
final class Invoice: Entity {
    var id: Id = 0
    // cellar: primaryKey
    var number: Int64 = 0
    var total: Double = 0
    // cellar: index
    var customer: String = ""

    required init() {}

    init(number: Int64, total: Double) {
        self.number = number
        self.total = total
    }
}

/// Full-text search (FullTextTests): an indexed body, an optional indexed title, and a summary
/// that `matches` searches without an index.
final class Article: Entity {
    var id: Id = 0
    // cellar: index = "fulltext"
    var body: String = ""
    // cellar: index = "fulltext"
    var title: String?
    var summary: String?
    var year: Int = 0

    required init() {}

    init(_ body: String, title: String? = nil, summary: String? = nil, year: Int = 0) {
        self.body = body
        self.title = title
        self.summary = summary
        self.year = year
    }
}

/// Geospatial queries (GeoQueryTests): an optional point with a geo index, a non-optional one
/// without an index (a record without it reads latitude 0, longitude 0).
final class Place: Entity {
    var id: Id = 0
    var name: String = ""
    // cellar: index = "geo"
    var location: GeoPoint?
    var entrance: GeoPoint = try! GeoPoint(latitude: 0, longitude: 0)
    var rating: Int = 0

    required init() {}

    init(_ name: String, _ location: GeoPoint?, rating: Int = 0) {
        self.name = name
        self.location = location
        if let location { entrance = location }
        self.rating = rating
    }
}

/// Vector search (VectorSearchTests): an embedding with an HNSW index (cosine, 8 dimensions) and
/// a group to filter by.
final class Passage: Entity {
    var id: Id = 0
    var title: String = ""
    // cellar: hnsw = { "dimensions": 8, "distanceType": "cosine" }
    var embedding: [Float] = []
    var group: Int = 0

    required init() {}

    init(_ title: String, _ embedding: [Float], group: Int = 0) {
        self.title = title
        self.embedding = embedding
        self.group = group
    }
}

/// ObjectBox's spelling of an HNSW index, on an optional vector: cities by location.
final class City: Entity {
    var id: Id = 0
    var name: String = ""
    // objectbox: hnswIndex: {"dimensions": 2, "distanceType": "geo", "neighborsPerNode": 8}
    var location: [Float]?

    required init() {}

    init(_ name: String, _ latitude: Float, _ longitude: Float) {
        self.name = name
        location = [latitude, longitude]
    }
}

// Projections: read-only views of some fields (ProjectionTests). Not in the model.

/// The headline (model name "headline") under its Swift name, an enum read under another name,
/// a converter property, a non-optional property read as an optional, and the typed id.
// cellar: projection = "Ticket"
struct TicketRow: Equatable {
    var id: EntityId<Ticket>
    var title: String
    // cellar: from = "priority"
    var level: Priority
    var temperature: Temperature
    var count: UInt16?
    var due: Date?
}

/// A ToOne read as its target's id and as an attached ToOne.
// cellar: projection = "Comment"
struct CommentRow {
    var id: Id
    // cellar: from = "ticket"
    var ticketId: Id
    var ticket: ToOne<Ticket>
}

/// Records written before `priority`, `created` and `note` existed read what the entity reads:
/// the initial value, the `default` annotation's value, nil.
// cellar: projection = "Reminder"
struct ReminderRow: Equatable {
    var title: String
    var priority: Int
    var created: Date
    var note: String?
}

// Embedded objects: stored inside their owners' records, with no id and no box
// (EmbeddedRoundTripTests; EmbeddedQueryTests queries them).

/// An optional embedded address, one that is always there (read as `Address()` from records
/// without it), and an optional list of earlier ones.
final class Contact: Entity {
    var id: Id = 0
    var name: String = ""
    var address: Address?
    var billing = Address()
    var previous: [Address]?

    required init() {}
}

/// A struct embedded in `Contact`, holding another embedded struct.
// cellar: embedded
struct Address: Equatable {
    var city: String = ""
    // cellar: index
    var zip: String = ""
    var geo: Geo?
}

// cellar: embedded
struct Geo: Equatable {
    var lat: Double = 0
    var lon: Double = 0
}

/// A struct entity with a list of embedded class objects.
struct Order: Entity {
    var id: Id = 0
    var number: String = ""
    var lines: [OrderLine] = []
}

/// A class embedded in a list: an enum by raw value, a converter, a list of strings, a date
/// and an optional nested object.
// cellar: embedded
final class OrderLine {
    var sku: String = ""
    var quantity: Int = 0
    // cellar: convert = { "default": ".unknown" }
    var priority: Priority = .unknown
    // cellar: convert = { "dbType": "Double", "converter": "TemperatureConverter" }
    var temperature: Temperature = Temperature(celsius: 20)
    var tags: [String] = []
    var shipped: Date?
    var origin: Geo?

    init() {}

    init(sku: String, quantity: Int) {
        self.sku = sku
        self.quantity = quantity
    }
}

/// Paths into embedded objects: through an optional object, through a non-optional one (a record
/// without it reads its initial value's property), two objects deep, and an embedded object.
// cellar: projection = "Contact"
struct ContactRow: Equatable {
    var name: String
    // cellar: from = "address.city"
    var city: String?
    // cellar: from = "billing.zip"
    var billingZip: String
    // cellar: from = "address.geo.lat"
    var lat: Double?
    // cellar: from = "billing.geo"
    var billingGeo: Geo?
}

// Delete rules (`// cellar: onDelete = …`): a folder owns its documents (cascade through the
// backlink of `Document.folder`) and its sub-folders (a standalone ToMany that may form cycles);
// a lock keeps its folder from being removed (deny); a shortcut loses its folder (nullify) and
// takes its target document with it when it is removed (cascade on its own ToOne).

final class Folder: Entity {
    var id: Id = 0
    var name: String = ""
    // cellar: onDelete = cascade
    var children: ToMany<Folder> = nil
    // cellar: backlink = "folder"
    // cellar: onDelete = cascade
    var documents: ToMany<Document> = nil
    // cellar: backlink = "folder"
    // cellar: onDelete = deny
    var locks: ToMany<FolderLock> = nil
    // cellar: backlink = "folder"
    // cellar: onDelete = "nullify"
    var shortcuts: ToMany<Shortcut> = nil

    required init() {}

    init(name: String) {
        self.name = name
    }
}

final class Document: Entity {
    var id: Id = 0
    var title: String = ""
    var folder: ToOne<Folder> = nil

    required init() {}

    init(title: String) {
        self.title = title
    }
}

final class FolderLock: Entity {
    var id: Id = 0
    var folder: ToOne<Folder> = nil

    required init() {}
}

final class Shortcut: Entity {
    var id: Id = 0
    var folder: ToOne<Folder> = nil
    // cellar: onDelete = cascade
    var target: ToOne<Document> = nil

    required init() {}
}

// Indexes over several properties (`// cellar: index = […]` and `unique = […]` on the type): a
// member is found by last name, first name and age (or a prefix of them), and no two members
// share an email at one employer (an absent employer is not checked).

// cellar: index = ["lastName", "firstName", "age"]
// cellar: unique = ["email", "employer"]
final class Member: Entity {
    var id: Id = 0
    var lastName: String = ""
    var firstName: String = ""
    var age: Int = 0
    var email: String = ""
    var employer: String?
    /// The projects some task of which is assigned to this member (through a ToOne inside the
    /// embedded `Assignment`s of `Project.tasks`), and those it leads.
    // cellar: backlink = "tasks.assignee"
    var tasks: ToMany<Project> = nil
    // cellar: backlink = "lead.assignee"
    var leading: ToMany<Project> = nil

    required init() {}

    init(_ lastName: String, _ firstName: String, age: Int, email: String = "", employer: String? = nil) {
        self.lastName = lastName
        self.firstName = firstName
        self.age = age
        self.email = email
        self.employer = employer
    }
}

// A ToOne inside embedded objects: an assignment names a member; a project holds an optional lead
// assignment and a list of task assignments.

// cellar: embedded
struct Assignment {
    var role: String = ""
    var assignee: ToOne<Member> = nil
}

final class Project: Entity {
    var id: Id = 0
    var name: String = ""
    var lead: Assignment?
    var tasks: [Assignment] = []

    required init() {}

    init(name: String) {
        self.name = name
    }
}
