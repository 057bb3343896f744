/// A full-text query in Realm's syntax, parsed into the tokens an index looks up.
///
/// Terms are separated by whitespace:
///
/// - `swift database`: every plain term is required (objects containing both).
/// - `-term` excludes the objects that contain the term.
/// - `term*` matches any token that starts with the term (a prefix).
///
/// A term is tokenized like text (`FullTextTokenizer`), so one term may give several tokens:
///
/// - `e-mail` requires both `e` and `mail` (anywhere in the text, in any order: the index keeps
///   no positions, so this is not a phrase).
/// - `-e-mail` excludes the objects that contain all of its tokens (`e` and `mail`); an object
///   with only one of them is not excluded.
/// - `e-ma*`: the last token is the prefix; the others are whole tokens (`e` required, a token
///   starting with `ma` required).
/// - `-data*` is allowed: it excludes the objects with a token starting with `data` (and, for a
///   term of several tokens, all its other tokens too). See `excludedPrefixes`.
///
/// Only the first `-` and the last `*` of a term are syntax; other punctuation separates tokens
/// (`--data` excludes `data`, `data**` is the prefix `data`, `da*ta` requires `da` and `ta`).
/// A term may both be required and excluded (`swift -swift`): then nothing matches.
///
/// `parse(_:)` rejects, with a `.illegalArgument` error quoting the query: an empty or blank
/// query, a lone `-`, a `*` with no term (`*`, `-*`), a term with no letters or digits (`!!`),
/// a term with a word longer than `FullTextTokenizer.maxTokenBytes` (no such token is indexed),
/// and a query with exclusions only (there must be something to find).
@_spi(Testing) public struct FullTextQuery: Sendable, Equatable {
    /// The tokens every matching object contains: of plain terms, and the tokens before the last
    /// of prefix terms. Distinct, in ascending byte order.
    public let required: [[UInt8]]
    /// The prefixes every matching object has a token starting with (the last token of each
    /// `term*`). Distinct, in ascending byte order.
    public let prefixes: [[UInt8]]
    /// The excluded terms without `*`: an object containing every token of one of them does not
    /// match. Each term's tokens are distinct and sorted; the terms are distinct and sorted.
    public let excluded: [[[UInt8]]]
    /// The excluded terms with `*`: an object containing every token of `tokens` and a token
    /// starting with `prefix` does not match. Distinct, sorted.
    public let excludedPrefixes: [ExcludedPrefix]

    /// An excluded term ending in `*` (`-data*`, `-big-da*`).
    public struct ExcludedPrefix: Sendable, Hashable {
        /// The term's whole tokens (those before its last), distinct and sorted; often empty.
        public let tokens: [[UInt8]]
        /// The term's last token, matched as a prefix.
        public let prefix: [UInt8]

        /// An excluded prefix term.
        public init(tokens: [[UInt8]], prefix: [UInt8]) {
            self.tokens = tokens
            self.prefix = prefix
        }
    }

    /// Parses `text` (see the type's documentation for the syntax and what is rejected).
    /// - Throws: `CellarError.illegalArgument` naming the query and what is wrong with it.
    public static func parse(_ text: String) throws -> FullTextQuery {
        func failure(_ problem: String) -> CellarError {
            .illegalArgument("full-text query \"\(text)\": \(problem)")
        }
        let terms = text.split(whereSeparator: \.isWhitespace)
        if terms.isEmpty { throw failure("it is empty; give at least one word to find") }
        var required = Set<[UInt8]>()
        var prefixes = Set<[UInt8]>()
        var excluded = Set<[[UInt8]]>()
        var excludedPrefixes = Set<ExcludedPrefix>()
        for term in terms {
            var body = term
            let excluding = body.first == "-"
            if excluding { body = body.dropFirst() }
            let prefix = body.last == "*"
            if prefix { body = body.dropLast() }
            if body.isEmpty {
                if prefix { throw failure("\"\(term)\": `*` must follow the start of a word, as in `data*`") }
                throw failure("a lone `-` must be followed by the term to exclude, as in `-data`")
            }
            let (tokens, skipped) = FullTextTokenizer.tokenBytes(of: body)
            if skipped > 0 {
                throw failure("the term \"\(term)\" has a word longer than \(FullTextTokenizer.maxTokenBytes) bytes, and such words are not indexed")
            }
            if tokens.isEmpty { throw failure("the term \"\(term)\" has no letters or digits") }
            let whole = prefix ? Array(tokens.dropLast()) : tokens
            switch (excluding, prefix) {
            case (false, _):
                required.formUnion(whole)
                if prefix { prefixes.insert(tokens[tokens.count - 1]) }
            case (true, false):
                excluded.insert(sortedDistinct(whole))
            case (true, true):
                excludedPrefixes.insert(ExcludedPrefix(tokens: sortedDistinct(whole), prefix: tokens[tokens.count - 1]))
            }
        }
        if required.isEmpty && prefixes.isEmpty {
            throw failure("it only excludes; give at least one term to find (a word without `-`)")
        }
        return FullTextQuery(
            required: required.sorted(by: precedes),
            prefixes: prefixes.sorted(by: precedes),
            excluded: excluded.sorted { $0.lexicographicallyPrecedes($1, by: precedes) },
            excludedPrefixes: excludedPrefixes.sorted {
                $0.prefix == $1.prefix ? $0.tokens.lexicographicallyPrecedes($1.tokens, by: precedes) : precedes($0.prefix, $1.prefix)
            })
    }

    private init(required: [[UInt8]], prefixes: [[UInt8]], excluded: [[[UInt8]]], excludedPrefixes: [ExcludedPrefix]) {
        self.required = required
        self.prefixes = prefixes
        self.excluded = excluded
        self.excludedPrefixes = excludedPrefixes
    }

    /// True when `document` matches: it has every required token, a token for every prefix, and
    /// is not excluded by any excluded term.
    public func matches(_ document: FullTextDocument) -> Bool {
        required.allSatisfy { document.count(of: $0) > 0 }
            && prefixes.allSatisfy { document.hasToken(withPrefix: $0) }
            && !excluded.contains { term in term.allSatisfy { document.count(of: $0) > 0 } }
            && !excludedPrefixes.contains { term in
                term.tokens.allSatisfy { document.count(of: $0) > 0 } && document.hasToken(withPrefix: term.prefix)
            }
    }

    private static func sortedDistinct(_ tokens: [[UInt8]]) -> [[UInt8]] {
        Set(tokens).sorted(by: precedes)
    }

    private static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.lexicographicallyPrecedes(b)
    }
}

/// The tokens of one text and how often each occurs: what a full-text query is matched and
/// scored against.
@_spi(Testing) public struct FullTextDocument: Sendable, Equatable {
    /// Each distinct folded token and the number of times it occurs.
    public private(set) var counts: [[UInt8]: Int] = [:]
    /// The number of tokens, repeats included (the document length BM25 uses).
    public private(set) var length = 0

    /// The tokens of UTF-8 `utf8` (invalid bytes separate words).
    public init(utf8: UnsafeRawBufferPointer) {
        FullTextTokenizer.forEachToken(in: utf8) { token in
            counts[Array(token), default: 0] += 1
            length += 1
        }
    }

    /// The tokens of `text`.
    public init(text: String) {
        var text = text
        self = text.withUTF8 { FullTextDocument(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// How often the folded token `token` occurs (0 when it does not).
    public func count(of token: [UInt8]) -> Int {
        counts[token] ?? 0
    }

    /// How often tokens starting with `prefix` occur, together (what BM25 counts for a prefix
    /// term).
    public func count(withPrefix prefix: [UInt8]) -> Int {
        counts.reduce(0) { $0 + ($1.key.starts(with: prefix) ? $1.value : 0) }
    }

    /// True when some token starts with `prefix` (a token equal to it included).
    public func hasToken(withPrefix prefix: [UInt8]) -> Bool {
        counts.keys.contains { $0.starts(with: prefix) }
    }
}
