// libFuzzer target: full-text search's parsing of what users type (`FullTextQuery.parse`) and its
// tokenizer (`FullTextTokenizer`), which every indexed string and every query goes through.
//
// Input: any bytes.
//
// 1. The raw bytes are tokenized (invalid UTF-8 separates words). Every token must be non-empty,
//    at most `FullTextTokenizer.maxTokenBytes` bytes, without a 0 byte (postings end a word with
//    one) and valid UTF-8; tokenizing a token's own bytes must give exactly that token again
//    (folding is idempotent: what is indexed is found by a query naming it).
// 2. The bytes read as a String (invalid UTF-8 replaced) are parsed as a query. It must either
//    throw `CellarError` with code `.illegalArgument`, or give a query whose every token (required,
//    prefixes, excluded, excluded prefixes) passes the checks of step 1 (each is one token that
//    tokenizes to itself). A query without exclusions must match the document made of its own
//    tokens. And `matches` runs on the document of the input's bytes.
//
// 3. The bytes are decoded as a stored posting block (what a full-text index keeps per word, under
//    a first id taken from the input): it must either throw `fileCorrupt`, or give 1…128 entries
//    with ids strictly increasing from the first id and counts at least 1, which encode back to
//    the same bytes.
// 4. The bytes are decoded as a stored HNSW graph node (an object's level and neighbours per
//    level, in a vector index's tree): it must either throw `fileCorrupt`, or give a level of at
//    most 24 with one list per level, each within the level's degree and sorted without repeats,
//    which encodes back to the same bytes.
//
// Anything else (another error, a crash, a trap, an AddressSanitizer report) is a bug in Cellar.
@_spi(Testing) import Cellar

/// Describes bytes for a trap message: as text when valid UTF-8, and in hex.
func show(_ bytes: some Sequence<UInt8>) -> String {
    let array = Array(bytes)
    let hex = array.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    let text = String(validating: array, as: UTF8.self).map { $0.debugDescription } ?? "(not UTF-8)"
    return "\(text) [\(hex)]"
}

/// The tokens of `bytes`, copied.
func tokens(of bytes: some Collection<UInt8>) -> [[UInt8]] {
    let array = Array(bytes)
    var result: [[UInt8]] = []
    array.withUnsafeBytes { raw in
        FullTextTokenizer.forEachToken(in: raw) { result.append(Array($0)) }
    }
    return result
}

/// Traps unless `token` is one a tokenizer can give: non-empty, short enough, without a 0 byte,
/// valid UTF-8, and folded already (it tokenizes to itself). `what` names where it came from.
func checkToken(_ token: [UInt8], _ what: String, input: UnsafeRawBufferPointer) {
    func fail(_ problem: String) -> Never {
        fatalError("\(what) \(show(token)) \(problem); input \(show(input))")
    }
    if token.isEmpty { fail("is empty") }
    if token.count > FullTextTokenizer.maxTokenBytes { fail("has \(token.count) bytes, more than \(FullTextTokenizer.maxTokenBytes)") }
    if token.contains(0) { fail("holds a 0 byte") }
    if String(validating: token, as: UTF8.self) == nil { fail("is not valid UTF-8") }
    let again = tokens(of: token)
    if again != [token] { fail("tokenizes to \(again.map { show($0) }), not to itself") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)

    // 1. The tokenizer on the raw bytes.
    var count = 0
    FullTextTokenizer.forEachToken(in: input) { token in
        checkToken(Array(token), "token \(count)", input: input)
        count += 1
    }
    let document = FullTextDocument(utf8: input)
    precondition(document.length == count, "FullTextDocument counts \(document.length) tokens where the tokenizer gave \(count)")

    // 4. The bytes as an HNSW node (M = 4, so that short inputs reach the degree bounds).
    do {
        let (level, neighbors) = try HNSWGraph.decodeNode(Array(input), neighborsPerNode: 4)
        precondition(level >= 0 && level <= 24 && neighbors.count == level + 1, "a node decoded to level \(level) with \(neighbors.count) lists; input \(show(input))")
        for (l, list) in neighbors.enumerated() {
            precondition(list.count <= (l == 0 ? 8 : 4), "a node's level \(l) has \(list.count) neighbours; input \(show(input))")
            precondition(zip(list, list.dropFirst()).allSatisfy { $0 < $1 }, "a node's neighbours are not sorted and distinct; input \(show(input))")
        }
        precondition(HNSWGraph.encodeNode(level: level, neighbors: neighbors).elementsEqual(input),
                     "a node does not encode back to its bytes; input \(show(input))")
    } catch CellarError.Code.fileCorrupt {
        // Refused, as a corrupt node must be.
    } catch {
        fatalError("decoding an HNSW node threw \(error), not fileCorrupt; input \(show(input))")
    }

    // 3. The bytes as a posting block.
    let firstId = input.count >= 8 ? input.loadUnaligned(as: UInt64.self) >> 8 : 1
    do {
        let entries = try FullTextIndexTesting.decodeBlock(input, firstId: firstId)
        precondition(!entries.isEmpty && entries.count <= 128, "a block decoded to \(entries.count) entries; input \(show(input))")
        precondition(entries[0].id == firstId, "a block's first entry is not its first id; input \(show(input))")
        for k in entries.indices {
            precondition(entries[k].count >= 1, "a block entry has count 0; input \(show(input))")
            if k > 0 { precondition(entries[k].id > entries[k - 1].id, "a block's ids are not increasing; input \(show(input))") }
        }
        precondition(FullTextIndexTesting.encodeBlock(entries).elementsEqual(input),
                     "a block does not encode back to its bytes; input \(show(input))")
    } catch CellarError.Code.fileCorrupt {
        // Refused, as a corrupt block must be.
    } catch {
        fatalError("decoding a posting block threw \(error), not fileCorrupt; input \(show(input))")
    }

    // 2. The query parser on the bytes as a String.
    let text = String(decoding: input, as: UTF8.self)
    let query: FullTextQuery
    do {
        query = try FullTextQuery.parse(text)
    } catch CellarError.Code.illegalArgument {
        return 0
    } catch {
        fatalError("FullTextQuery.parse threw \(error), not illegalArgument; input \(show(input))")
    }
    for token in query.required { checkToken(token, "required token", input: input) }
    for token in query.prefixes { checkToken(token, "prefix", input: input) }
    for term in query.excluded {
        if term.isEmpty { fatalError("an excluded term has no tokens; input \(show(input))") }
        for token in term { checkToken(token, "excluded token", input: input) }
    }
    for term in query.excludedPrefixes {
        checkToken(term.prefix, "excluded prefix", input: input)
        for token in term.tokens { checkToken(token, "excluded prefix term's token", input: input) }
    }
    if query.required.isEmpty && query.prefixes.isEmpty {
        fatalError("a query with nothing to find parsed; input \(show(input))")
    }

    // The document of the query's own tokens has them all.
    var own: [UInt8] = []
    for token in query.required + query.prefixes { own += token + [0x20] }
    let ownDocument = own.withUnsafeBytes { FullTextDocument(utf8: $0) }
    if query.excluded.isEmpty && query.excludedPrefixes.isEmpty && !query.matches(ownDocument) {
        fatalError("a query does not match the document of its own tokens; input \(show(input))")
    }

    _ = query.matches(document)
    return 0
}
