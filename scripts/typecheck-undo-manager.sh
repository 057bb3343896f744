#!/usr/bin/env bash
# Type-checks the Apple-only UndoManager adapter (Sources/Cellar/Undo/UndoManagerRegistrar.swift)
# on Linux, where Foundation has no UndoManager: against a stand-in UndoManager for each shape its
# declaration has had or may have in Apple's SDKs (a main-actor class or not; a handler that is
# plain, @Sendable, or @MainActor @Sendable). Swift 6 language mode, warnings as errors. What the
# adapter calls must compile under every one of them, or an iOS build would break.
set -euo pipefail
cd "$(dirname "$0")/.."
adapter=Sources/Cellar/Undo/UndoManagerRegistrar.swift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shapes=(
    "|@escaping (T) -> Void"
    "|@escaping @Sendable (T) -> Void"
    "@MainActor|@escaping (T) -> Void"
    "@MainActor|@escaping @Sendable (T) -> Void"
    "@MainActor|@escaping @MainActor @Sendable (T) -> Void"
)
for shape in "${shapes[@]}"; do
    isolation="${shape%%|*}" handler="${shape#*|}"
    {
        echo "import Foundation"
        # The protocol as the package declares it.
        sed -n '/^public protocol UndoActionRegistering/,/^}/p' Sources/Cellar/Undo/Store+UndoRegistration.swift
        echo "$isolation open class UndoManager {"
        echo "    public init() {}"
        echo "    open func registerUndo<T: AnyObject>(withTarget target: T, handler: $handler) {}"
        echo "    open func setActionName(_ actionName: String) {}"
        echo "}"
        # The adapter without its #if canImport(Darwin) lines and its import.
        grep -v -e '^#if canImport(Darwin)' -e '^#endif' -e '^import Foundation' "$adapter"
    } > "$work/check.swift"
    if ! swiftc -swift-version 6 -warnings-as-errors -typecheck "$work/check.swift"; then
        echo "the UndoManager adapter does not type-check against: ${isolation:-nonisolated} class, handler $handler"
        exit 1
    fi
done
echo "the UndoManager adapter type-checks against ${#shapes[@]} shapes of UndoManager"
