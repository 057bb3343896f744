@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarStorage
import CellarTestSupport
import Foundation
import Testing

/// An undo stack that registers as Foundation's `UndoManager` does (the POSIX twin of the
/// `UndoManager` a store registers with on Apple platforms): the newest action is undone first; an
/// action registered while an undo runs goes to the redo stack, one registered while a redo runs
/// to the undo stack; a registration outside both clears the redo stack.
final class UndoActionStack: UndoActionRegistering, @unchecked Sendable {
    // Unchecked: used from the test's thread only.
    private enum Running { case none, undo, redo }
    private var undos: [(name: String, action: @Sendable () -> Void)] = []
    private var redos: [(name: String, action: @Sendable () -> Void)] = []
    private var running = Running.none

    func registerUndoAction(named actionName: String, _ action: @escaping @Sendable () -> Void) {
        switch running {
        case .undo: redos.append((actionName, action))
        case .redo: undos.append((actionName, action))
        case .none:
            undos.append((actionName, action))
            redos.removeAll()
        }
    }

    var undoActionName: String? { undos.last?.name }
    var redoActionName: String? { redos.last?.name }

    func undo() {
        guard let last = undos.popLast() else { return }
        running = .undo
        last.action()
        running = .none
    }

    func redo() {
        guard let last = redos.popLast() else { return }
        running = .redo
        last.action()
        running = .none
    }
}

/// Named writes registered with an undo manager: each one an action under its name, undone and
/// redone through it in the store; a group one action; a write that keeps no step none; an
/// action that no longer matches the store's next step reports an error and changes nothing.
@Suite struct UndoRegistrationTests {
    @Test func namedWritesAreUndoneAndRedoneThroughTheRegistrar() throws {
        let dir = TestDirectory("undo-registrar")
        defer { dir.remove() }
        let store = try UndoTests.open(dir)
        defer { store.close() }
        let stack = UndoActionStack()
        let errors = Locked<[String]>([])
        store.registerUndoActions(with: stack) { error in errors.withLock { $0.append("\(error)") } }
        let items = store.box(for: QItem.self)
        let item = UndoTests.item("draft", score: 1)
        try store.write(actionName: "Create") { try items.put(item) }
        try store.write(actionName: "Rename") {
            item.title = "final"
            try items.put(item)
        }
        try store.write(actionName: "Nothing") {}  // no step, no action
        try store.undoGroup(actionName: "Scores") {
            for score in [5, 6] as [Int32] {
                try store.write(actionName: "Score") {
                    item.score = score
                    try items.put(item)
                }
            }
        }
        #expect(stack.undoActionName == "Scores")
        stack.undo()
        #expect(try items.get(item.id)?.score == 1)
        #expect(stack.redoActionName == "Scores" && stack.undoActionName == "Rename")
        stack.undo()
        #expect(try items.get(item.id)?.title == "draft")
        stack.redo()
        #expect(try items.get(item.id)?.title == "final")
        stack.redo()
        #expect(try items.get(item.id)?.score == 6)
        #expect(stack.redoActionName == nil && stack.undoActionName == "Scores")
        stack.undo()
        stack.undo()
        stack.undo()
        #expect(try items.count() == 0)
        stack.redo()
        #expect(try items.get(item.id)?.title == "draft")
        // A new named write drops what could be redone, in the store and in the stack alike.
        try store.write(actionName: "Retitle") {
            item.title = "other"
            try items.put(item)
        }
        #expect(try stack.redoActionName == nil && store.redoActionName() == nil)
        #expect(errors.withLock { $0 }.isEmpty)

        // The store undone behind the registrar's back: its action no longer matches, and says so.
        #expect(try store.undo() == "Retitle")
        stack.undo()
        #expect(try items.get(item.id)?.title == "draft", "nothing else was undone")
        #expect(errors.withLock { $0 }.count == 1)
        #expect(errors.withLock { $0 }.first?.contains("is not the store's next step") == true)

        // Nil stops registering.
        store.registerUndoActions(with: nil)
        try store.write(actionName: "Unregistered") {
            item.title = "x"
            try items.put(item)
        }
        #expect(stack.undoActionName == "Create")
    }
}
