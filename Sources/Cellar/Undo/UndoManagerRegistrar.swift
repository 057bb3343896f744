#if canImport(Darwin)
import Foundation

/// Foundation's `UndoManager` as the place a store registers its undo actions:
/// `store.registerUndoActions(with: UndoManagerRegistrar(undoManager))`. Each named write then
/// appears in the Edit menu under its action name; Undo and Redo there undo and redo it in the
/// store. The manager is held weakly. Registration happens on the main thread: at once when the
/// write ran there, else on the main queue soon after (the manager is the main actor's).
public final class UndoManagerRegistrar: UndoActionRegistering, @unchecked Sendable {
    // Unchecked: `manager` is read and used on the main thread only.
    private weak var manager: UndoManager?

    /// Registers with `manager` (held weakly).
    public init(_ manager: UndoManager) {
        self.manager = manager
    }

    /// Registers `action` with the manager under `actionName`, on the main thread.
    public func registerUndoAction(named actionName: String, _ action: @escaping @Sendable () -> Void) {
        let register: @Sendable () -> Void = { [weak self] in
            MainActor.assumeIsolated {
                guard let self, let manager = self.manager else { return }
                manager.registerUndo(withTarget: self) { _ in action() }
                manager.setActionName(actionName)
            }
        }
        if Thread.isMainThread { register() } else { DispatchQueue.main.async(execute: register) }
    }
}
#endif
