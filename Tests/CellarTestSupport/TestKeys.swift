import CellarStorage

/// The encryption key of the tests' encrypted stores (and of the crash child's), fixed so that a
/// parent process opens what its child wrote.
public enum TestKeys {
    public static let encryption = try! EncryptionKey(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })
}
