@_spi(Testing) import Cellar
import Foundation
import Testing

/// `FullTextQuery`: Realm's syntax parsed into tokens, every error, and `matches`.
@Suite struct FullTextQueryTests {
    private func bytes(_ tokens: String...) -> [[UInt8]] { tokens.map { Array($0.utf8) } }

    private func matches(_ query: String, _ text: String) throws -> Bool {
        try FullTextQuery.parse(query).matches(FullTextDocument(text: text))
    }

    // MARK: Parsing

    @Test func plainTermsAreAllRequiredDistinctAndSorted() throws {
        let query = try FullTextQuery.parse("  Swift\tdatabase swift\n")
        #expect(query.required == bytes("database", "swift"))
        #expect(query.prefixes.isEmpty)
        #expect(query.excluded.isEmpty)
        #expect(query.excludedPrefixes.isEmpty)
    }

    @Test func aTermOfSeveralTokensRequiresThemAll() throws {
        let query = try FullTextQuery.parse("e-mail Café")
        #expect(query.required == bytes("cafe", "e", "mail"))
    }

    @Test func aTrailingStarMakesTheLastTokenAPrefix() throws {
        #expect(try FullTextQuery.parse("data*").prefixes == bytes("data"))
        #expect(try FullTextQuery.parse("data*").required.isEmpty)
        let query = try FullTextQuery.parse("e-ma* Über*")
        #expect(query.required == bytes("e"))
        #expect(query.prefixes == bytes("ma", "uber"))
        // Only the last `*` is syntax; other punctuation separates.
        #expect(try FullTextQuery.parse("data**") == FullTextQuery.parse("data*"))
        #expect(try FullTextQuery.parse("da*ta").required == bytes("da", "ta"))
    }

    @Test func aLeadingMinusExcludesTheTerm() throws {
        let query = try FullTextQuery.parse("swift -java -e-mail -Mail-E")
        #expect(query.required == bytes("swift"))
        #expect(query.excluded == [bytes("e", "mail"), bytes("java")])
        #expect(try FullTextQuery.parse("swift --java") == FullTextQuery.parse("swift -java"))
    }

    @Test func anExcludedPrefixIsAllowed() throws {
        let query = try FullTextQuery.parse("swift -data* -big-da*")
        #expect(query.excluded.isEmpty)
        #expect(query.excludedPrefixes == [
            FullTextQuery.ExcludedPrefix(tokens: bytes("big"), prefix: Array("da".utf8)),
            FullTextQuery.ExcludedPrefix(tokens: [], prefix: Array("data".utf8)),
        ])
    }

    @Test func theOrderOfTermsDoesNotMatter() throws {
        #expect(try FullTextQuery.parse("b a -d -c x*") == FullTextQuery.parse("-c x* a -d b"))
    }

    @Test func cjkTermsGiveOneTokenPerCharacter() throws {
        #expect(try FullTextQuery.parse("東京").required == bytes("京", "東"))
        #expect(try FullTextQuery.parse("한국*").prefixes == bytes("한국"))
    }

    // MARK: Errors

    private func error(_ text: String) -> CellarError? {
        do {
            _ = try FullTextQuery.parse(text)
            return nil
        } catch let error as CellarError {
            return error
        } catch {
            return nil
        }
    }

    @Test(arguments: [
        ("", "it is empty"),
        (" \t\n ", "it is empty"),
        ("swift -", "a lone `-`"),
        ("*", "`*` must follow"),
        ("swift -*", "`*` must follow"),
        ("swift !!", "the term \"!!\" has no letters or digits"),
        ("swift -!!", "the term \"-!!\" has no letters or digits"),
        ("swift ...*", "the term \"...*\" has no letters or digits"),
        ("swift 🔥", "has no letters or digits"),
        ("-swift", "it only excludes"),
        ("-swift -data*", "it only excludes"),
        ("swift " + String(repeating: "x", count: 65), "longer than 64 bytes"),
        ("swift e-" + String(repeating: "x", count: 65), "longer than 64 bytes"),
    ])
    func invalidQueriesAreRejected(_ text: String, _ problem: String) {
        let error = error(text)
        #expect(error?.code == .illegalArgument)
        #expect(error?.message.hasPrefix("full-text query \"\(text)\": ") == true, "\(error?.message ?? "no error")")
        #expect(error?.message.contains(problem) == true, "\(error?.message ?? "no error")")
    }

    @Test func theLongestTokenIsAccepted() throws {
        let longest = String(repeating: "x", count: 64)
        #expect(try FullTextQuery.parse(longest).required == [Array(longest.utf8)])
    }

    // MARK: Matching

    @Test func everyPlainTermIsRequired() throws {
        #expect(try matches("swift database", "A database written in Swift"))
        #expect(try !matches("swift database", "Swift is a language"))
        #expect(try matches("SWIFT", "swift"))
        #expect(try matches("cafe", "Café au lait"))
        #expect(try matches("café", "CAFE"))
        #expect(try !matches("data", "database"))
    }

    @Test func prefixesMatchTokenStarts() throws {
        #expect(try matches("data*", "database"))
        #expect(try matches("data*", "data"))
        #expect(try !matches("data*", "metadata"))
        #expect(try matches("e-ma*", "send an e-mail"))
        #expect(try matches("e-ma*", "e is for male"))
        #expect(try !matches("e-ma*", "email"))
    }

    @Test func exclusionsRemoveObjects() throws {
        #expect(try !matches("swift -java", "Swift and Java"))
        #expect(try matches("swift -java", "Swift and Kotlin"))
        #expect(try !matches("swift -data*", "Swift databases"))
        #expect(try matches("swift -data*", "Swift metadata"))
        // A term of several tokens excludes only objects with all of them.
        #expect(try !matches("send -e-mail", "send mail by e-mail"))
        #expect(try !matches("send -e-mail", "send mail, e"))
        #expect(try matches("send -e-mail", "send mail"))
        #expect(try !matches("send -big-da*", "send big data"))
        #expect(try matches("send -big-da*", "send big files"))
        #expect(try matches("send -big-da*", "send data"))
        #expect(try !matches("swift -swift", "swift"))
    }

    @Test func documentsCountTokens() {
        let document = FullTextDocument(text: "The cat and THE hat: the end")
        #expect(document.length == 7)
        #expect(document.count(of: Array("the".utf8)) == 3)
        #expect(document.count(of: Array("dog".utf8)) == 0)
        #expect(document.hasToken(withPrefix: Array("ha".utf8)))
        #expect(document.hasToken(withPrefix: Array("hat".utf8)))
        #expect(!document.hasToken(withPrefix: Array("hats".utf8)))
        #expect(document.count(withPrefix: Array("th".utf8)) == 3)
        #expect(document.count(withPrefix: []) == 7)
        #expect(FullTextDocument(text: "") == FullTextDocument(text: "!?"))
        #expect(FullTextDocument(text: "").length == 0)
        let bytes: [UInt8] = [0x61, 0xFF, 0x61]
        #expect(bytes.withUnsafeBytes { FullTextDocument(utf8: $0) }.count(of: [0x61]) == 2)
    }
}
