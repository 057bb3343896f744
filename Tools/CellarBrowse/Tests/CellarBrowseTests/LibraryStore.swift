@_spi(CellarGenerated) import Cellar
import Foundation

// A small library for the browser's tests: authors, books (a to-one relation to their author, a
// standalone to-many relation to tags) and tags, with bindings written by hand the way the
// generator writes them.

final class Author: Entity, EntityInspectable {
    var id: Id = 0
    var name = ""
    var born: Int32 = 0
    init() {}
    init(_ name: String, born: Int32) { self.name = name; self.born = born }
    static let entityBinding = AuthorBinding()
}

struct AuthorBinding: EntityBinding {
    typealias EntityType = Author
    var entityName: String { "Author" }
    var entityId: IdUid { IdUid(id: 1, uid: 71_100) }
    var slotCount: Int { 3 }
    func id(of entity: Author) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout Author) { entity.id = id }
    func write(_ entity: Author, to record: RecordBuilder) throws {
        record.add(entity.name, slot: 1)
        record.add(entity.born, slot: 2)
    }
    func read(id: Id, from record: RecordReader) throws -> Author {
        let author = Author()
        author.id = id
        author.name = try record.string(slot: 1) ?? ""
        author.born = try record.read(Int32.self, slot: 2) ?? 0
        return author
    }
}

final class Tag: Entity, EntityInspectable {
    var id: Id = 0
    var label = ""
    init() {}
    init(_ label: String) { self.label = label }
    static let entityBinding = TagBinding()
}

struct TagBinding: EntityBinding {
    typealias EntityType = Tag
    var entityName: String { "Tag" }
    var entityId: IdUid { IdUid(id: 3, uid: 71_300) }
    var slotCount: Int { 2 }
    func id(of entity: Tag) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout Tag) { entity.id = id }
    func write(_ entity: Tag, to record: RecordBuilder) throws { record.add(entity.label, slot: 1) }
    func read(id: Id, from record: RecordReader) throws -> Tag {
        let tag = Tag()
        tag.id = id
        tag.label = try record.string(slot: 1) ?? ""
        return tag
    }
}

final class Book: Entity, EntityInspectable {
    var id: Id = 0
    var title = ""
    var year: Int32 = 0
    var rating: Double?
    var author: ToOne<Author> = nil
    var tags: ToMany<Tag> = nil
    init() {}
    init(_ title: String, year: Int32, rating: Double?) { self.title = title; self.year = year; self.rating = rating }
    static let entityBinding = BookBinding()
}

struct BookBinding: EntityBinding {
    typealias EntityType = Book
    var entityName: String { "Book" }
    var entityId: IdUid { IdUid(id: 2, uid: 71_200) }
    var slotCount: Int { 5 }
    func id(of entity: Book) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout Book) { entity.id = id }
    func write(_ entity: Book, to record: RecordBuilder) throws {
        record.add(entity.title, slot: 1)
        record.add(entity.year, slot: 2)
        record.add(entity.rating, slot: 3)
        record.add(try entity.author.targetIdForPut(), slot: 4)
    }
    func read(id: Id, from record: RecordReader) throws -> Book {
        let book = Book()
        book.id = id
        book.title = try record.string(slot: 1) ?? ""
        book.year = try record.read(Int32.self, slot: 2) ?? 0
        book.rating = try record.double(slot: 3)
        book.author = ToOne(targetId: try record.read(Id.self, slot: 4) ?? 0)
        return book
    }
    var hasRelations: Bool { true }
    func attach(_ entity: Book, id: Id, store: Store) {
        entity.author.attach(store)
        entity.tags.attach(store, owner: id, link: .relation(1))
    }
    func writeRelations(of entity: Book, id: Id, in writer: RelationWriter) throws {
        try entity.tags.write(owner: id, link: .relation(1), in: writer)
    }
}

/// The library's model: Author (1), Book (2, `author` indexed as relations are), Tag (3), and
/// the standalone relation Book.tags (1).
func libraryModel() -> Cellar.Model {
    func p(_ name: String, _ entity: UInt64, _ id: UInt32, _ type: PropertyType, _ flags: PropertyFlags = [],
           index: IdUid? = nil, target: String? = nil) -> ModelProperty {
        ModelProperty(name: name, id: IdUid(id: id, uid: entity + UInt64(id)), type: type, flags: flags, indexId: index, relationTarget: target)
    }
    let author = ModelEntity(name: "Author", id: IdUid(id: 1, uid: 71_100), lastPropertyId: IdUid(id: 3, uid: 71_103), properties: [
        p("id", 71_100, 1, .long, .id), p("name", 71_100, 2, .string), p("born", 71_100, 3, .int),
    ])
    let book = ModelEntity(name: "Book", id: IdUid(id: 2, uid: 71_200), lastPropertyId: IdUid(id: 5, uid: 71_205), properties: [
        p("id", 71_200, 1, .long, .id), p("title", 71_200, 2, .string), p("year", 71_200, 3, .int), p("rating", 71_200, 4, .double),
        p("author", 71_200, 5, .relation, [.indexed, .indexPartialSkipZero], index: IdUid(id: 1, uid: 71_901), target: "Author"),
    ], relations: [ModelRelation(name: "tags", id: IdUid(id: 1, uid: 71_801), targetId: IdUid(id: 3, uid: 71_300))])
    let tag = ModelEntity(name: "Tag", id: IdUid(id: 3, uid: 71_300), lastPropertyId: IdUid(id: 2, uid: 71_302), properties: [
        p("id", 71_300, 1, .long, .id), p("label", 71_300, 2, .string),
    ])
    return Cellar.Model(entities: [author, book, tag], lastEntityId: IdUid(id: 3, uid: 71_300),
                        lastIndexId: IdUid(id: 1, uid: 71_901), lastRelationId: IdUid(id: 1, uid: 71_801))
}

/// A temporary directory, removed by `remove()`.
struct TemporaryDirectory: Sendable {
    let path: String

    init(_ label: String) {
        path = NSTemporaryDirectory() + "cellar-browse-\(label)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Fills a new library store in `path` and returns it open (the caller may write more):
/// authors Ada (1), Grace (2), Edsger (3); tags "classic" (1), "systems" (2); 12 books
/// "Book 1" … "Book 12" (id = number), years 1970 + n, rated n % 5 (none for every fourth),
/// by author n % 3 + 1, tagged "classic" when n is odd and "systems" when n % 3 == 0; book 13's
/// title holds markup (a script element and an ampersand).
func makeLibrary(_ path: String, options: StoreOptions = StoreOptions(durability: .none)) throws -> Store {
    let store = try Store(directoryPath: path, model: libraryModel(), options: options)
    let authors = [Author("Ada", born: 1815), Author("Grace", born: 1906), Author("Edsger", born: 1930)]
    try store.box(for: Author.self).put(authors)
    let classic = Tag("classic"), systems = Tag("systems")
    try store.box(for: Tag.self).put([classic, systems])
    var books: [Book] = []
    for n in 1...12 {
        let book = Book("Book \(n)", year: Int32(1970 + n), rating: n % 4 == 0 ? nil : Double(n % 5))
        book.author.target = authors[n % 3]
        if n % 2 == 1 { book.tags.append(classic) }
        if n % 3 == 0 { book.tags.append(systems) }
        books.append(book)
    }
    books.append(Book("<script>alert('x')</script> & more", year: 2000, rating: 1))
    try store.box(for: Book.self).put(books)
    return store
}
