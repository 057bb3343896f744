@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// Undo and redo of what lives beside an object's fields: its full-text, geo, vector and
/// primary-key indexes answer as the fields they are back to say; embedded objects and
/// collections come back whole.
@Suite struct UndoIndexesTests {
    static func open(_ dir: TestDirectory) throws -> Store {
        try Store(directoryPath: dir.path, model: cellarModel(), options: StoreOptions(durability: .none, changeHistory: true))
    }

    @Test func indexesFollowUndoAndRedo() throws {
        let dir = TestDirectory("undo-indexes")
        defer { dir.remove() }
        let store = try Self.open(dir)
        defer { store.close() }

        let articles = store.box(for: Article.self)
        let article = Article("apple pie recipes")
        try store.write(actionName: "Add article") { try articles.put(article) }
        let places = store.box(for: Place.self)
        let place = Place()
        place.name = "cafe"
        place.location = try GeoPoint(latitude: 48.85, longitude: 2.35)
        try store.write(actionName: "Add place") { try places.put(place) }
        let passages = store.box(for: Passage.self)
        let passage = Passage("p", [1, 0, 0, 0, 0, 0, 0, 0])
        let other = Passage("q", [0, 1, 0, 0, 0, 0, 0, 0])
        try store.write(actionName: "Add passages") { _ = try passages.put([passage, other]) }
        let accounts = store.box(for: Account.self)
        let account = Account(email: "ada@example.com", name: "Ada")
        let grace = Account(email: "grace@example.com", name: "Grace")
        try store.write(actionName: "Add account") { try accounts.put(account) }

        try store.write(actionName: "Edit everything") {
            article.body = "banana split"
            try articles.put(article)
            place.location = try GeoPoint(latitude: -33.87, longitude: 151.21)
            try places.put(place)
            passage.embedding = [0, 0, 1, 0, 0, 0, 0, 0]
            try passages.put(passage)
            // A primary key never changes: the object with it is removed, another one made.
            try accounts.remove(account.id)
            grace.id = try accounts.put(grace).value
        }
        let paris = try GeoCircle(center: try GeoPoint(latitude: 48.85, longitude: 2.35), radius: .kilometers(5))
        let sydney = try GeoCircle(center: try GeoPoint(latitude: -33.87, longitude: 151.21), radius: .kilometers(5))
        func check(edited: Bool) throws {
            let ftsOld = try articles.query { Article.body.matches("apple") }.build().findIds().map(\.value)
            let ftsNew = try articles.query { Article.body.matches("banana") }.build().findIds().map(\.value)
            #expect(ftsOld == (edited ? [] : [article.id]) && ftsNew == (edited ? [article.id] : []))
            #expect(try places.query { Place.location.isWithin(paris) }.build().count() == (edited ? 0 : 1))
            #expect(try places.query { Place.location.isWithin(sydney) }.build().count() == (edited ? 1 : 0))
            // The vector index: the edited embedding is found where it is (an exact match).
            let at = edited ? [Float](arrayLiteral: 0, 0, 1, 0, 0, 0, 0, 0) : [1, 0, 0, 0, 0, 0, 0, 0]
            #expect(try passages.query { Passage.embedding.nearestNeighbors(to: at, maxCount: 1) }.build().findIds().map(\.value) == [passage.id])
            #expect(try accounts.get(primaryKey: "ada@example.com")?.id == (edited ? nil : account.id))
            #expect(try accounts.get(primaryKey: "grace@example.com") == nil ? !edited : edited)
            #expect(try accounts.get(primaryKey: "ada@example.com")?.name == (edited ? nil : "Ada"))
        }
        try check(edited: true)
        #expect(try store.undo() == "Edit everything")
        try check(edited: false)
        #expect(try store.redo() == "Edit everything")
        try check(edited: true)
    }

    @Test func embeddedObjectsAndCollectionsComeBackWhole() throws {
        let dir = TestDirectory("undo-embedded")
        defer { dir.remove() }
        let store = try Self.open(dir)
        defer { store.close() }
        let contacts = store.box(for: Contact.self)
        let contact = Contact()
        contact.name = "Grace"
        contact.billing = Address(city: "Arlington", zip: "22201", geo: Geo(lat: 38.88, lon: -77.1))
        contact.previous = [Address(city: "New York", zip: "10003")]
        try store.write(actionName: "Add contact") { try contacts.put(contact) }
        let posts = store.box(for: Post.self)
        let post = Post()
        post.title = "t"
        post.tags = ["a", "b"]
        post.attributes = ["k": "v"]
        post.payload = .string("flex")
        try store.write(actionName: "Add post") { try posts.put(post) }

        try store.write(actionName: "Move") {
            contact.billing.city = "Washington"
            contact.billing.geo = nil
            contact.previous?.append(Address(city: "Arlington", zip: "22201"))
            try contacts.put(contact)
            post.tags = ["c"]
            post.attributes = [:]
            post.payload = .integer(7)
            try posts.put(post)
        }
        #expect(try store.undo() == "Move")
        let back = try #require(try contacts.get(contact.id))
        #expect(back.billing == Address(city: "Arlington", zip: "22201", geo: Geo(lat: 38.88, lon: -77.1)))
        #expect(back.previous == [Address(city: "New York", zip: "10003")])
        let postBack = try #require(try posts.get(post.id))
        #expect(postBack.tags == ["a", "b"] && postBack.attributes == ["k": "v"] && postBack.payload == .string("flex"))
        #expect(try store.redo() == "Move")
        let again = try #require(try contacts.get(contact.id))
        #expect(again.billing.city == "Washington" && again.billing.geo == nil && again.previous?.count == 2)
        #expect(try posts.get(post.id)?.tags == ["c"])
    }
}
