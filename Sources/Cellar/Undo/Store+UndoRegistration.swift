// Undo actions registered with an undo manager (`docs/undo.md`, "With an undo manager"): each
// named write (``Store/write(actionName:_:)``, ``Store/undoGroup(actionName:_:)``) registers one,
// which undoes it in the store and registers the redo action, as Foundation's `UndoManager` asks
// of its clients. On Apple platforms `UndoManagerRegistrar` brings an `UndoManager`; any undo
// stack that registers the same way serves (the tests use one of their own).

/// Keeps undo actions as Foundation's `UndoManager` does: the newest registered is the next to
/// undo; an action registered while an undo runs is the redo of it, and one registered while a
/// redo runs is an undo again.
public protocol UndoActionRegistering: AnyObject, Sendable {
    /// Registers `action` under `actionName` (what the Edit menu shows).
    func registerUndoAction(named actionName: String, _ action: @escaping @Sendable () -> Void)
}

/// Where a store registers its undo actions, and whom it tells of an action that failed.
struct UndoRegistration: Sendable {
    let registrar: any UndoActionRegistering
    let onError: @Sendable (any Error) -> Void
}

extension Store {
    /// From now on, registers an undo action with `registrar` for each named write: running it
    /// undoes that write (``undo()``) and registers the redo action, which redoes it (``redo()``)
    /// and registers the undo action again. Nil stops registering. Undo through the registrar
    /// only, then: an action applies the store's next step only when it is the one the action
    /// names, else it reports an error and does nothing.
    ///
    /// - Parameters:
    ///   - registrar: where the actions go (`UndoManagerRegistrar` on Apple platforms); nil
    ///     stops registering.
    ///   - onError: told of an undo or redo that failed, or did not match the store's next step
    ///     (an action cannot throw); it runs on the thread that ran the action.
    public func registerUndoActions(with registrar: (any UndoActionRegistering)?,
                                    onError: @escaping @Sendable (any Error) -> Void = { _ in }) {
        undoRegistration.withLock { $0 = registrar.map { UndoRegistration(registrar: $0, onError: onError) } }
    }

    /// After a named write kept its step: registers the action that undoes it.
    func registerUndoAction(named actionName: String) {
        guard let registration = undoRegistration.withLock({ $0 }) else { return }
        register(actionName, forward: false, with: registration)
    }

    /// Registers the action that moves `actionName`'s step backwards (`forward` false) or forwards,
    /// and when it has run, the one that moves it back.
    private func register(_ actionName: String, forward: Bool, with registration: UndoRegistration) {
        registration.registrar.registerUndoAction(named: actionName) { [weak self] in
            guard let self else { return }
            do {
                let next = try forward ? redoActionName() : undoActionName()
                guard next == actionName else {
                    throw CellarError.illegalArgument("the undo action \"\(actionName)\" is not the store's next step to \(forward ? "redo" : "undo") (\(next.map { "\"\($0)\"" } ?? "none")): undo and redo through the registrar only")
                }
                _ = try forward ? redo() : undo()
            } catch {
                registration.onError(error)
                return
            }
            register(actionName, forward: !forward, with: registration)
        }
    }
}
