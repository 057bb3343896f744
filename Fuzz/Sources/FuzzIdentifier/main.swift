// libFuzzer target: the input is a persistent identifier's string (its URI, or its Codable form:
// the URI and `#<entity UID>`), as an app reads one back from a file, a search index or a URL.
//
// 1. `PersistentIdentifier(_:)` reads it; a thrown `CellarError.illegalArgument` is the expected
//    answer to a malformed string.
// 2. What reads is written again (`description`, `uriRepresentation`, JSON) and read back: it
//    must give an equal identifier with the same entity UID, and writing that again the same text.
// 3. The same string as JSON (`JSONDecoder`) must be read exactly when step 1 reads it.
//
// A crash, a trap (a URL that cannot be made, an overflow) or a round trip that changes the
// identifier is a bug in the parser or the writer.
import Cellar
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let string = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
    let parsed = try? PersistentIdentifier(string)

    let json = try? JSONEncoder().encode([string])
    let decoded = json.flatMap { try? JSONDecoder().decode([PersistentIdentifier].self, from: $0) }?.first
    precondition((parsed == nil) == (decoded == nil), "JSON decoding and init(_:) disagree on \(string.debugDescription)")

    guard let pid = parsed else { return 0 }
    precondition(decoded == pid && decoded?.entityUid == pid.entityUid, "JSON decoding read another identifier")

    let text = pid.description
    let uri = pid.uriRepresentation
    precondition(uri.absoluteString == text, "the URI is not the description")
    guard let again = try? PersistentIdentifier(text), let fromURI = try? PersistentIdentifier(uriRepresentation: uri) else {
        fatalError("an identifier's own URI does not read back: \(text)")
    }
    precondition(again == pid && fromURI == pid && again.description == text, "URI round trip changed \(text)")
    precondition(again.isTemporary == pid.isTemporary && again.id == pid.id && again.entityName == pid.entityName)

    guard let encoded = try? JSONEncoder().encode(pid),
          let back = try? JSONDecoder().decode(PersistentIdentifier.self, from: encoded)
    else { fatalError("an identifier's own Codable form does not read back: \(text)") }
    precondition(back == pid && back.entityUid == pid.entityUid, "Codable round trip changed \(text)")
    precondition((try? JSONEncoder().encode(back)) == encoded, "Codable wrote the identifier differently the second time")
    return 0
}
