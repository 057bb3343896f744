import Cellar

// The primary-key benchmark's `Contact` as an app declares it; its binding and `model-keyed.json`
// come from cellar-generator (run from the repository's root after changing this entity):
//   swift package --package-path Benchmarks --allow-writing-to-package-directory cellar-generate --target keyed

final class Contact: Entity {
    var id: Id = 0
    /// `contact%09d@example.com`: the primary key.
    // cellar: primaryKey
    var email: String = ""
    var name: String = ""
    var visits: Int = 0

    required init() {}

    init(email: String, name: String, visits: Int) {
        self.email = email
        self.name = name
        self.visits = visits
    }
}
