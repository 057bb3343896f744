// libFuzzer target: the input is the body of a B+tree node record (the bytes after its 16-byte
// record header), handed to `Diagnostics.checkNode`, the check every node read from disk passes
// before it is used. A body it accepts is then copied and encoded as a write and its commit do
// (`Diagnostics.nodeCopies`), which must give its entries back to back whatever their layout. A
// thrown error is the expected answer to a malformed body; a crash, a trap or an AddressSanitizer
// report (a read outside the input) is a bug in CellarStorage.
//
// libFuzzer passes a heap copy of exactly `size` bytes, so ASan catches any read past the body.
import CellarStorage

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = UnsafeRawBufferPointer(start: data, count: size)
    if let summary = try? Diagnostics.checkNode(body) {
        // A valid body holds its 8-byte header and one 4-byte slot per entry. (Nothing bounds
        // `payloadBytes` by the size: slots of a valid node may point at the same entry.)
        precondition(size >= 8 && summary.entries <= (size - 8) / 4,
                     "checkNode accepted \(summary.entries) entries in a \(size)-byte body")
        // A write's copy of the node, encoded as a commit writes it, at once and entry by entry:
        // the node's entries in order, back to back after the slots, whatever its layout.
        let copies = try! Diagnostics.nodeCopies(body)
        var compact = Array(body.prefix(8))
        var at = 8 + 4 * copies.entries.count
        for entry in copies.entries {
            compact += withUnsafeBytes(of: UInt32(at).littleEndian) { Array($0) }
            at += entry.count
        }
        for entry in copies.entries { compact += entry }
        precondition(copies.atOnce == compact, "a copy encoded at once differs from the node's entries back to back")
        precondition(copies.entryByEntry == compact, "a copy encoded entry by entry differs from the node's entries back to back")
    }
    return 0
}
