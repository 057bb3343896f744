@_spi(CellarGenerated) import Cellar
import Foundation

/// The workload of the test where several processes write one database through `Store`
/// (`StoreOptions.sharedWriting`): `Person`s of `MigrationWorkload`'s version 2 (a unique email).
/// Writer `w`'s step `k` (1-based) is one transaction:
/// - a new person, email `w<w>-<k>@example.com`, first name `w<w>`, last name `k`;
/// - when k % 5 == 0, a person with a shared email (`shared-<k / 5 % 10>@example.com`): taken by
///   one process once, refused (`uniqueViolation`) to every later try, whoever makes it; the
///   whole step is then tried again without it;
/// - when k % 3 == 0, step k - 1's person updated (age `u<k>`);
/// - when k % 7 == 0, step k - 6's person removed;
/// - the writer's progress (`progress-w<w>`, age = k).
public enum SharedStoreWorkload {
    public typealias Person = Row<MigrationWorkload.V2>
    public static let email = Property<Person>(name: "email", id: 4, type: .string)
    public static let firstName = Property<Person>(name: "firstName", id: 5, type: .string)

    public static var model: Cellar.Model { MigrationWorkload.model(MigrationWorkload.V2.entity) }

    public static func options(encrypted: Bool) -> StoreOptions {
        var options = StoreOptions(automaticCompaction: nil)
        options.sharedWriting = true
        if encrypted { options.encryptionKey = TestKeys.encryption }
        return options
    }

    public static func emailOf(writer: Int, step: Int) -> String { "w\(writer)-\(step)@example.com" }

    static func find(_ box: Box<Person>, email value: String) throws -> Person? {
        try box.query { email == value }.build().findFirst()
    }

    /// The last step writer `w` committed (0 before its first).
    public static func progress(_ store: Store, writer: Int) throws -> Int {
        guard let row = try find(store.box(for: Person.self), email: "progress-w\(writer)"),
              case .string(let step)? = row.values["age"] else { return 0 }
        return Int(step) ?? 0
    }

    /// Step `k` of writer `w`; returns whether the shared email was taken by it.
    @discardableResult
    public static func step(_ store: Store, writer w: Int, step k: Int) throws -> Bool {
        let box = store.box(for: Person.self)
        func body(sharing: Bool) throws {
            try store.runInTransaction {
                try box.put(Person(["email": .string(emailOf(writer: w, step: k)), "firstName": .string("w\(w)"),
                                    "lastName": .string(String(k))]))
                if sharing {
                    try box.put(Person(["email": .string("shared-\(k / 5 % 10)@example.com"), "firstName": .string("s")]))
                }
                if k % 3 == 0, let previous = try find(box, email: emailOf(writer: w, step: k - 1)) {
                    previous.values["age"] = .string("u\(k)")
                    try box.put(previous)
                }
                if k % 7 == 0, k > 6, let old = try find(box, email: emailOf(writer: w, step: k - 6)) {
                    _ = try box.remove(old.id)
                }
                let progress = try find(box, email: "progress-w\(w)") ?? Person(["email": .string("progress-w\(w)")])
                progress.values["age"] = .string(String(k))
                try box.put(progress)
            }
        }
        guard k % 5 == 0 else {
            try body(sharing: false)
            return false
        }
        do {
            try body(sharing: true)
            return true
        } catch let error as CellarError where error.code == .uniqueViolation {
            try body(sharing: false)
            return false
        }
    }

    /// What a live query of the writers' persons (first name starting with `w`) holds, as the
    /// observer prints it: the count and a digest of the emails.
    public static func digest(_ people: [Person]) -> String {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for email in people.compactMap({ person -> String? in
            if case .string(let e)? = person.values["email"] { return e }
            return nil
        }).sorted() {
            for byte in email.utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
            hash = (hash ^ 0xff) &* 1_099_511_628_211
        }
        return "\(people.count) \(String(hash, radix: 16))"
    }

    public static func writersQuery(_ store: Store) throws -> Query<Person> {
        try store.box(for: Person.self).query { firstName.startsWith("w") }.build()
    }
}
