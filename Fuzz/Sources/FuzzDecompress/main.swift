// libFuzzer target: the zstd frame of a stored compressed value, decoded as every read decodes it.
//
// Input: byte 0 picks the dictionary (even: none; odd: a fixed dictionary with id 1, trained once
// per process from Note-like values, `NoteSamples`); the rest is the frame, handed to
// `Diagnostics.decodeCompressedValue` (the read path's header checks, dictionary lookup, decode
// and exact-size check, on raw bytes). A thrown `StorageError.fileCorrupt` is the expected answer
// to a bad frame; any other error, a crash, a trap or an AddressSanitizer report is a bug in
// CellarStorage (or in libzstd).
//
// libzstd is the system's (CZstd links it with pkg-config), built without coverage counters or
// ASan: libFuzzer sees the Swift side only (header checks, the dictionary lookup, the exact-size
// check, the round trip), and a bad read inside zstd shows only when it faults.
//
// When the frame decodes, the output is compressed again as a store would write it
// (`Diagnostics.compressValue`, the same dictionary) and, when that gives a frame (values that do
// not shrink by an eighth are stored as they are), the frame must decode to the same bytes.
//
// libFuzzer passes a heap copy of exactly `size` bytes, so ASan catches any read past the frame.
// Nothing here runs at top level (libFuzzer supplies `main`): the dictionary is a static property,
// trained on first use.
import CellarStorage
import FuzzSupport

enum Fixed {
    /// The dictionary odd inputs decode with: the one MakeCorpus trains for the seeds of
    /// `corpus/decompress` (same samples, capacity and id).
    static let dictionary: [UInt8] = {
        guard let made = try? Diagnostics.trainDictionary(NoteSamples.notes(), capacity: NoteSamples.dictionaryCapacity,
                                                          id: NoteSamples.dictionaryId) else {
            fatalError("FuzzDecompress: zstd trains no dictionary from the Note samples")
        }
        return made
    }()
}

/// The frame decoded with `dictionary`; nil when the decoder rejects it with `fileCorrupt`. Any
/// other error is a bug: it traps.
func decode(_ frame: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer?) -> [UInt8]? {
    do {
        return try Diagnostics.decodeCompressedValue(frame, dictionary: dictionary)
    } catch StorageError.fileCorrupt {
        return nil
    } catch {
        fatalError("decodeCompressedValue threw \(type(of: error)) \(error), not fileCorrupt")
    }
}

/// Decodes `frame` and, when it decodes, checks that the output compresses and decodes back to itself.
func check(_ frame: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer?) {
    guard let output = decode(frame, dictionary: dictionary) else { return }
    // The header check bounds what a frame may claim: at most 4096 times its size.
    precondition(output.count <= frame.count * 4096, "a \(frame.count)-byte frame decoded to \(output.count) bytes")
    let again: [UInt8]?
    do {
        again = try output.withUnsafeBytes { try Diagnostics.compressValue($0, dictionary: dictionary) }
    } catch {
        fatalError("compressValue failed on \(output.count) decoded bytes: \(error)")
    }
    guard let again else { return }
    let back: [UInt8]
    do {
        back = try again.withUnsafeBytes { try Diagnostics.decodeCompressedValue($0, dictionary: dictionary) }
    } catch {
        fatalError("a frame made by compressValue (\(again.count) bytes for \(output.count)) does not decode: \(error)")
    }
    if back != output {
        fatalError("a value of \(output.count) bytes compressed and decoded to \(back.count) different bytes")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let frame = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    if data[0] & 1 == 0 {
        check(frame, dictionary: nil)
    } else {
        Fixed.dictionary.withUnsafeBytes { check(frame, dictionary: $0) }
    }
    return 0
}
