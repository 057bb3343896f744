@_spi(CellarGenerated) @_spi(Testing) import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// ToOne, standalone ToMany, backlinks of both, link conditions; across reopens.
@Suite struct RelationTests {
    static let options = StoreOptions(durability: .none)

    @Test func toOneTargetsResolveAndARemovedTargetReadsAsNil() throws {
        let dir = TestDirectory("rel-toone")
        defer { dir.remove() }
        var store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options)
        let ada = QAuthor("Ada")
        let item = QItem()
        item.author.target = ada
        #expect(item.author.hasValue)
        #expect(throws: CellarError.self) { try store.box(for: QItem.self).put(item) }
        #expect(try store.box(for: QItem.self).count() == 0)
        try store.box(for: QAuthor.self).put(ada)
        try store.box(for: QItem.self).put(item)
        #expect(item.author.targetId == ada.id)
        store.close()

        store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options)
        let read = try #require(try store.box(for: QItem.self).get(item.id))
        #expect(read.author.targetId == ada.id)
        #expect(read.author.target?.name == "Ada")
        try store.box(for: QAuthor.self).remove(ada.id)
        #expect(read.author.target == nil)
        #expect(read.author.hasValue)   // the id stays until the relation is changed
        read.author.targetId = 0
        #expect(!read.author.hasValue)
        store.close()
    }

    @Test func backlinkOfAToOne() throws {
        let dir = TestDirectory("rel-backlink")
        defer { dir.remove() }
        var store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options)
        let ada = QAuthor("Ada")
        let bob = QAuthor("Bob")
        try store.box(for: QAuthor.self).put([ada, bob])
        var items: [QItem] = []
        for i in 0..<5 {
            let item = QItem()
            item.title = "item \(i)"
            item.author.target = i < 3 ? ada : bob
            items.append(item)
        }
        try store.box(for: QItem.self).put(items)
        store.close()

        store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options)
        let authors = store.box(for: QAuthor.self)
        let readAda = try #require(try authors.get(ada.id))
        #expect(readAda.notes.map(\.title) == ["item 0", "item 1", "item 2"])
        // Moving an item to Ada through her backlink sets its ToOne.
        let readBob = try #require(try authors.get(bob.id))
        let moved = readBob.notes.first!
        readBob.notes.removeFirst()
        try authors.put(readBob)
        readAda.notes.append(moved)
        try authors.put(readAda)
        #expect(try store.box(for: QItem.self).get(moved.id)?.author.targetId == ada.id)
        try readAda.notes.resolve()
        #expect(readAda.notes.map(\.title) == ["item 0", "item 1", "item 2", "item 3"])
        try readBob.notes.resolve()
        #expect(readBob.notes.map(\.title) == ["item 4"])
        // Removing from the backlink unsets the ToOne (applyToDb without putting the author).
        readAda.notes.removeAll { $0.title == "item 0" }
        try readAda.notes.applyToDb()
        #expect(try store.box(for: QItem.self).get(items[0].id)?.author.targetId == 0)
        store.close()
        let summary = try verifyStore(dir.path)
        #expect(summary.objects == 7)
    }

    @Test func standaloneToManyAndItsBacklink() throws {
        let dir = TestDirectory("rel-tomany")
        defer { dir.remove() }
        var store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options)
        let tags = ["work", "home", "urgent"].map(QTag.init)
        let unsaved = QTag("never put")
        try store.box(for: QTag.self).put(tags)
        let item = QItem()
        item.title = "tagged"
        item.tags.append(contentsOf: [tags[0], tags[2]])
        try store.box(for: QItem.self).put(item)
        let other = QItem()
        other.tags = [tags[0]]
        try store.box(for: QItem.self).put(other)
        let broken = QItem()
        broken.tags.append(unsaved)
        #expect(throws: CellarError.self) { try store.box(for: QItem.self).put(broken) }
        #expect(broken.id == 0)
        store.close()

        store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options)
        let items = store.box(for: QItem.self)
        let read = try #require(try items.get(item.id))
        #expect(read.tags.map(\.label) == ["work", "urgent"])
        let work = try #require(try store.box(for: QTag.self).get(tags[0].id))
        #expect(work.items.map(\.id) == [item.id, other.id])
        // Changes are written with the owner.
        read.tags.removeAll { $0.label == "work" }
        read.tags.append(tags[1])
        try items.put(read)
        #expect(try items.get(item.id)?.tags.map(\.label) == ["home", "urgent"])
        try work.items.resolve()
        #expect(work.items.map(\.id) == [other.id])
        // Adding through the backlink links the other way round.
        let home = try #require(try store.box(for: QTag.self).get(tags[1].id))
        home.items.append(other)
        try home.items.applyToDb()
        #expect(try items.get(other.id)?.tags.map(\.label) == ["work", "home"])
        // A removed target is left out; a removed owner takes its links with it.
        try store.box(for: QTag.self).remove(tags[2].id)
        #expect(try items.get(item.id)?.tags.map(\.label) == ["home"])
        try items.remove(other.id)
        try home.items.resolve()
        #expect(home.items.map(\.id) == [item.id])
        store.close()
        #expect(try verifyStore(dir.path).relationLinks == 1)
    }

    @Test func aRetiredRelationsTreesAreDropped() throws {
        let dir = TestDirectory("rel-retired")
        defer { dir.remove() }
        var store = try Store(directoryPath: dir.path, model: queryModel(), options: Self.options)
        let tag = QTag("t")
        try store.box(for: QTag.self).put(tag)
        let item = QItem()
        item.tags.append(tag)
        try store.box(for: QItem.self).put(item)
        store.close()
        func relationTrees() throws -> [String] {
            let engine = try StorageEngine(directory: dir.path, options: StorageOptions(readOnly: true))
            defer { engine.close() }
            return try engine.read { try $0.treeNames() }.filter { $0.hasPrefix("r") || $0.hasPrefix("b") }
        }
        #expect(try relationTrees() == ["b1", "r1"])
        store = try Store(directoryPath: dir.path, model: queryModel(tags: false), options: Self.options)
        #expect(store.modelChanges.contains(.retireRelation(entity: "QItem", relation: "tags")))
        store.close()
        #expect(try relationTrees() == [])
    }

    @Test func linkConditions() throws {
        let store = try Store(directoryPath: "memory:links", model: queryModel())
        let ada = QAuthor("Ada")
        let bob = QAuthor("Bob")
        try store.box(for: QAuthor.self).put([ada, bob])
        let work = QTag("work")
        let home = QTag("home")
        try store.box(for: QTag.self).put([work, home])
        var items: [QItem] = []
        for i in 0..<10 {
            let item = QItem()
            item.score = Int32(i)
            item.author.target = i % 2 == 0 ? ada : bob
            if i % 3 == 0 { item.tags.append(work) }
            if i % 4 == 0 { item.tags.append(home) }
            items.append(item)
        }
        try store.box(for: QItem.self).put(items)
        let box = store.box(for: QItem.self)
        let byAda = try box.query().link(QItem.author) { QAuthor.name == "Ada" }.build()
        #expect(try byAda.find().map(\.score) == [0, 2, 4, 6, 8])
        #expect(try byAda.count() == 5)
        let byAdaAbove3 = try box.query { QItem.score > 3 }.link(QItem.author) { QAuthor.name == "Ada" }.build()
        #expect(try byAdaAbove3.find().map(\.score) == [4, 6, 8])
        let tagged = try box.query().link(QItem.tags) { QTag.label == "work" || QTag.label == "home" }
            .ordered(by: QItem.score, flags: .descending).build()
        #expect(try tagged.find().map(\.score) == [9, 8, 6, 4, 3, 0])
        let nobody = try box.query().link(QItem.author) { QAuthor.name == "Nobody" }.build()
        #expect(try nobody.count() == 0)
        #expect(throws: CellarError.self) { try box.query().link(QItem.title) { QAuthor.name == "Ada" }.build() }
    }

    @Test func generatedRelations() throws {
        let store = try Store(directoryPath: "memory:generated-relations", model: cellarModel())
        let tag = Tag(name: "bug")
        try store.box(for: Tag.self).put(tag)
        let ticket = Ticket()
        ticket.title = "crash"
        ticket.tags.append(tag)
        try store.box(for: Ticket.self).put(ticket)
        let comment = Comment(text: "seen it too")
        comment.ticket.target = ticket
        try store.box(for: Comment.self).put(comment)

        let read = try #require(try store.box(for: Ticket.self).get(ticket.id))
        #expect(read.tags.map(\.name) == ["bug"])
        #expect(read.comments.map(\.text) == ["seen it too"])
        #expect(try store.box(for: Tag.self).get(tag.id)?.tickets.map(\.title) == ["crash"])
        #expect(try store.box(for: Comment.self).get(comment.id)?.ticket.target?.title == "crash")
        let linked = try store.box(for: Ticket.self).query().link(Ticket.tags) { Tag.name == "bug" }.build()
        #expect(try linked.count() == 1)
        let byTicket = try store.box(for: Comment.self).query().link(Comment.ticket) { Ticket.title.startsWith("cr") }.build()
        #expect(try byTicket.find().map(\.text) == ["seen it too"])
    }
}

// MARK: ObjectBox's example Author/Note model with its `author` relation (type 11, flags 520)

final class SeedAuthor: Entity, EntityInspectable {
    var id: Id = 0
    var name = ""
    var notes: ToMany<SeedNote> = nil
    init() {}
    static let entityBinding = SeedAuthorBinding()
    static let name = Property<SeedAuthor>(name: "name", id: 2, type: .string)
}

struct SeedAuthorBinding: EntityBinding {
    typealias EntityType = SeedAuthor
    var entityName: String { "Author" }
    var entityId: IdUid { IdUid(id: 1, uid: 712_683_617_673_955_584) }
    var slotCount: Int { 2 }
    func id(of entity: SeedAuthor) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout SeedAuthor) { entity.id = id }
    func write(_ entity: SeedAuthor, to record: RecordBuilder) throws { record.add(entity.name, slot: 1) }
    func read(id: Id, from record: RecordReader) throws -> SeedAuthor {
        let author = SeedAuthor()
        author.id = id
        author.name = try record.string(slot: 1) ?? ""
        return author
    }
    var hasRelations: Bool { true }
    func attach(_ entity: SeedAuthor, id: Id, store: Store) {
        entity.notes.attach(store, owner: id, link: .backlinkOfToOne(property: 6))
    }
    func writeRelations(of entity: SeedAuthor, id: Id, in writer: RelationWriter) throws {
        try entity.notes.write(owner: id, link: .backlinkOfToOne(property: 6), in: writer)
    }
}

final class SeedNote: Entity, EntityInspectable {
    var id: Id = 0
    var title = ""
    var text = ""
    var creationDate = Date(timeIntervalSince1970: 0)
    var modificationDate = Date(timeIntervalSince1970: 0)
    var author: ToOne<SeedAuthor> = nil
    init() {}
    static let entityBinding = SeedNoteBinding()
    static let title = Property<SeedNote>(name: "title", id: 2, type: .string)
    static let creationDate = Property<SeedNote>(name: "creationDate", id: 4, type: .date)
    static let author = Property<SeedNote>(name: "author", id: 6, type: .relation)
}

struct SeedNoteBinding: EntityBinding {
    typealias EntityType = SeedNote
    var entityName: String { "Note" }
    var entityId: IdUid { IdUid(id: 2, uid: 5_608_901_830_082_711_040) }
    var slotCount: Int { 6 }
    func id(of entity: SeedNote) -> Id { entity.id }
    func setId(_ id: Id, of entity: inout SeedNote) { entity.id = id }
    func write(_ entity: SeedNote, to record: RecordBuilder) throws {
        record.add(entity.title, slot: 1)
        record.add(entity.text, slot: 2)
        try record.add(entity.creationDate, slot: 3)
        try record.add(entity.modificationDate, slot: 4)
        record.add(try entity.author.targetIdForPut(), slot: 5)
    }
    func read(id: Id, from record: RecordReader) throws -> SeedNote {
        let note = SeedNote()
        note.id = id
        note.title = try record.string(slot: 1) ?? ""
        note.text = try record.string(slot: 2) ?? ""
        note.creationDate = try record.date(slot: 3) ?? Date(timeIntervalSince1970: 0)
        note.modificationDate = try record.date(slot: 4) ?? Date(timeIntervalSince1970: 0)
        note.author = ToOne(targetId: try record.read(Id.self, slot: 5) ?? 0)
        return note
    }
    var hasRelations: Bool { true }
    func attach(_ entity: SeedNote, id: Id, store: Store) { entity.author.attach(store) }
}

@Suite struct SeedRelationTests {
    @Test func theSeedModelsAuthorRelation() throws {
        let model = try Cellar.Model(json: Array(ModelJSONSeed.text.utf8), file: "example model")
        let dir = TestDirectory("seed-relation")
        defer { dir.remove() }
        var store = try Store(directoryPath: dir.path, model: model, options: StoreOptions(durability: .none))
        let authors = ["Ada", "Grace", "Edsger"].map { name in let a = SeedAuthor(); a.name = name; return a }
        try store.box(for: SeedAuthor.self).put(authors)
        let notes = (0..<30).map { i in
            let note = SeedNote()
            note.title = "note \(i)"
            note.creationDate = Date(timeIntervalSince1970: Double(i))
            note.author.target = authors[i % 3]
            return note
        }
        try store.box(for: SeedNote.self).put(notes)
        store.close()

        store = try Store(directoryPath: dir.path, model: model, options: StoreOptions(durability: .none))
        let box = store.box(for: SeedNote.self)
        let grace = authors[1].id
        let byGrace = try box.query { SeedNote.author == grace }.ordered(by: SeedNote.creationDate, flags: .descending).build()
        #expect(try byGrace.count() == 10)
        #expect(try byGrace.findFirst()?.title == "note 28")
        #expect(try byGrace.findFirst()?.author.target?.name == "Grace")
        #expect(try store.box(for: SeedAuthor.self).get(grace)?.notes.count == 10)
        let byName = try box.query { SeedNote.creationDate < Date(timeIntervalSince1970: 6) }
            .link(SeedNote.author) { SeedAuthor.name == "Edsger" }.build()
        #expect(try byName.find().map(\.title) == ["note 2", "note 5"])
        store.close()
        let summary = try verifyStore(dir.path)
        #expect(summary.indexEntries == 30)
    }
}
