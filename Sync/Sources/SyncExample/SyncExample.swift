import Cellar
import CellarSync
import Foundation
import Logging

// Two stores, a phone's and a laptop's, kept in step through a PostgreSQL server: what one
// writes reaches the other, edits made offline on both merge property by property, and live
// sync carries a commit across in moments. Run it with scripts/sync-demo.sh, which starts a
// throwaway server; or set CELLAR_SYNC_POSTGRES to a server's URL (a database you may create
// a schema in) and `swift run --package-path Sync sync-example`.

/// Stops the example with a message (exit status 1).
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("sync-example: " + message + "\n").utf8))
    exit(1)
}

func show(_ device: String, _ store: Store) throws {
    let todos = try store.box(for: Todo.self).all().sorted { $0.title < $1.title }
    print("  \(device): " + todos.map { "[\($0.done ? "x" : " ")] \($0.title)" + ($0.note.isEmpty ? "" : " (\($0.note))") }.joined(separator: ", "))
}

func titles(_ store: Store) throws -> [String] {
    try store.box(for: Todo.self).all().map { "\($0.title)|\($0.done)|\($0.note)" }.sorted()
}

@main
enum SyncExample {
    static func main() async {
        do {
            try await run()
        } catch {
            fail("\(error)")
        }
    }

    static func run() async throws {
        guard let url = ProcessInfo.processInfo.environment["CELLAR_SYNC_POSTGRES"], !url.isEmpty else {
            fail("set CELLAR_SYNC_POSTGRES to a PostgreSQL URL (scripts/sync-demo.sh starts a throwaway server and sets it)")
        }
        let server = try SyncServer(url: url)
        print("Syncing through \(server)")  // the description never shows a password

        let directory = NSTemporaryDirectory() + "cellar-sync-example-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var storeOptions = StoreOptions()
        storeOptions.changeHistory = true  // sync sends the store's change history
        let phone = try Store(directoryPath: directory + "/phone", options: storeOptions)
        let laptop = try Store(directoryPath: directory + "/laptop", options: storeOptions)

        var options = SyncOptions()
        options.schema = "example_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)  // a fresh namespace per run
        var logger = Logger(label: "sync-example")
        logger.logLevel = .error
        let phoneSync = SyncClient(store: phone, server: server, options: options, logger: logger)
        let laptopSync = SyncClient(store: laptop, server: server, options: options, logger: logger)

        print("\n1. The phone writes three to-dos; one round of sync on each device.")
        try phone.box(for: Todo.self).put(["Buy milk", "Call the plumber", "Book flights"].map(Todo.init(title:)))
        let pushed = try await phoneSync.sync()
        let pulled = try await laptopSync.sync()
        print("  phone pushed \(pushed.pushed) objects; laptop applied \(pulled.applied)")
        try show("phone ", phone)
        try show("laptop", laptop)
        guard try titles(phone) == titles(laptop) else { fail("the laptop does not hold the phone's to-dos") }

        print("\n2. Both offline: the phone ticks off the milk, the laptop renames it and adds a note.")
        let milkOnPhone = try phone.box(for: Todo.self).all().first { $0.title == "Buy milk" }!
        milkOnPhone.done = true
        try phone.box(for: Todo.self).put(milkOnPhone)
        let milkOnLaptop = try laptop.box(for: Todo.self).all().first { $0.title == "Buy milk" }!
        milkOnLaptop.title = "Buy oat milk"
        milkOnLaptop.note = "two cartons"
        try laptop.box(for: Todo.self).put(milkOnLaptop)
        print("  back online: each syncs; per property, the later writer wins, so both edits survive")
        try await phoneSync.sync()
        try await laptopSync.sync()
        try await phoneSync.sync()
        try show("phone ", phone)
        try show("laptop", laptop)
        guard try titles(phone) == titles(laptop),
              let merged = try phone.box(for: Todo.self).all().first(where: { $0.title == "Buy oat milk" }), merged.done, merged.note == "two cartons" else {
            fail("the offline edits did not merge")
        }

        print("\n3. Live: both devices sync continuously (LISTEN/NOTIFY); the laptop adds a to-do.")
        let phoneLive = Task { await phoneSync.run() }
        let laptopLive = Task { await laptopSync.run() }
        let started = ContinuousClock.now
        try laptop.box(for: Todo.self).put(Todo(title: "Water the plants"))
        var arrived = false
        while ContinuousClock.now - started < .seconds(30) {
            if try phone.box(for: Todo.self).all().contains(where: { $0.title == "Water the plants" }) { arrived = true; break }
            try await Task.sleep(for: .milliseconds(2))
        }
        guard arrived else { fail("the laptop's new to-do did not reach the phone within 30 s") }
        let elapsed = (ContinuousClock.now - started).components
        print(String(format: "  on the phone %.0f ms after the laptop's commit", Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15))
        phoneLive.cancel(); laptopLive.cancel()
        await phoneLive.value; await laptopLive.value
        try show("phone ", phone)
        print("  synced: \(try !phoneSync.hasPendingChanges() && !laptopSync.hasPendingChanges() ? "yes, nothing left to push" : "no")")

        await phoneSync.close(); await laptopSync.close()
        phone.close(); laptop.close()
        // The example's tables go with their namespace.
        let connection = try await server.connect(logger: logger)
        try await connection.query("DROP SCHEMA \(unescaped: options.schema) CASCADE", logger: logger)
        try await connection.close()
        print("\nDone: the two stores hold the same to-dos.")
    }
}
