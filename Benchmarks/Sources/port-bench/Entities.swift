import Cellar

// The porting benchmark's entities as an app declares them; their binding and
// `model-port-bench.json` come from cellar-generator (run from the repository's root after changing them):
//   swift package --package-path Benchmarks --allow-writing-to-package-directory cellar-generate --target port-bench

/// A parent whose children go with it: the backlink of `Child.parent` cascades.
final class Parent: Entity {
    var id: Id = 0
    var name: String = ""
    // cellar: backlink = "parent"
    // cellar: onDelete = cascade
    var children: ToMany<Child> = nil

    required init() {}

    init(name: String) {
        self.name = name
    }
}

final class Child: Entity {
    var id: Id = 0
    var name: String = ""
    var parent: ToOne<Parent> = nil

    required init() {}

    init(name: String) {
        self.name = name
    }
}

/// A person found by last and first name through an index over both.
// cellar: index = ["lastName", "firstName"]
final class Person: Entity {
    var id: Id = 0
    var lastName: String = ""
    var firstName: String = ""
    var age: Int = 0

    required init() {}

    init(lastName: String, firstName: String, age: Int) {
        self.lastName = lastName
        self.firstName = firstName
        self.age = age
    }
}
