import Cellar
import Foundation

/// The sync tests' model: values of most kinds, a to-one and a to-many relation, and an
/// insert-only entity (marked asymmetric).
final class Item: Entity {
    var id: Id = 0
    var title: String = ""
    var count: Int = 0
    var score: Double = 0
    var done: Bool = false
    var due: Date?
    var tags: [String] = []
    var attributes: [String: String] = [:]
    var extra: FlexValue?
    var data: Data?
    var price: Decimal?
    var owner: ToOne<Person> = nil
    var helpers: ToMany<Person> = nil

    required init() {}

    init(title: String, count: Int = 0) {
        self.title = title
        self.count = count
    }
}

final class Person: Entity {
    var id: Id = 0
    var name: String = ""
    var age: Int = 0

    required init() {}

    init(name: String, age: Int = 0) {
        self.name = name
        self.age = age
    }
}

/// Telemetry: pushed, then dropped locally.
// cellar: asymmetric
final class LogLine: Entity {
    var id: Id = 0
    var message: String = ""
    var at: Date = Date(timeIntervalSince1970: 0)

    required init() {}

    init(message: String) {
        self.message = message
        at = Date()
    }
}
