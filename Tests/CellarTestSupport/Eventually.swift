/// Waits until `condition` holds, asking again every 2 ms; true once it did. For what another
/// thread or queue does in its own time (a published result, a released observer): the test waits
/// for the event, however long a busy machine takes. `hangGuard` seconds is only a guard against a
/// hang, which then fails the wait (false): never a pace the code under test must keep.
public func eventually(hangGuard: Int = 300, _ condition: () throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let start = clock.now
    while clock.now - start < .seconds(hangGuard) {
        if try condition() { return true }
        try? await Task.sleep(nanoseconds: 2_000_000)
    }
    return try condition()
}
