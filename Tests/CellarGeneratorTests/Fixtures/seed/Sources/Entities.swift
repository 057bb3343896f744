// The entities of ObjectBox's example project, whose model file ObjectBox's documentation shows
// (model-Seed.json here): generating from them must leave that file byte for byte as it is.
import Cellar
import Foundation

class Author: Entity {
    var id: Id = 0
    var name: String = ""
    required init() {}
}

class Note: Entity {
    var id: Id = 0
    var title: String = ""
    var text: String = ""
    var creationDate: Date?
    var modificationDate: Date?
    var author: ToOne<Author> = nil
    required init() {}
}
