import CellarStorage

/// The paths through embedded properties that property constants were made with
/// (`Contact.home.city` is `city` through `home`), each under a small number.
///
/// A `Property` keeps that number, not the path: a property of the entity itself has 0, and
/// stays a value the hot paths copy without reference counting (`ObjectView` reads a field of
/// every record of a scan through one). Paths are made when conditions are written, never on the
/// hot paths; equal paths get the same number, so properties compare as their paths do. The
/// table holds each distinct path the code spells once, for the life of the process.
enum EmbeddedPaths {
    private static let table = Locked<(paths: [[PropertyRef]], numbers: [[PropertyRef]: UInt32])>(([[]], [[]: 0]))

    /// The number of `path` (0 for the empty path).
    static func number(_ path: [PropertyRef]) -> UInt32 {
        if path.isEmpty { return 0 }
        return table.withLock { table in
            if let number = table.numbers[path] { return number }
            let number = UInt32(table.paths.count)
            table.paths.append(path)
            table.numbers[path] = number
            return number
        }
    }

    /// The path under `number`.
    static func path(_ number: UInt32) -> [PropertyRef] {
        if number == 0 { return [] }
        return table.withLock { $0.paths[Int(number)] }
    }
}
