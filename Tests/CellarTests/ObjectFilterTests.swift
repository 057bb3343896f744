@_spi(Testing) import Cellar
import Testing

/// `ObjectFilter` (`cellar dump --where`): its grammar, its errors, and what it matches.
@Suite struct ObjectFilterTests {
    static let object: JSONValue = .object([
        JSONMember("id", .number("18446744073709551615")),
        JSONMember("title", .string("Shopping list")),
        JSONMember("score", .number("2.5")),
        JSONMember("count", .number("-3")),
        JSONMember("done", .bool(false)),
        JSONMember("text", .null),
        JSONMember("tags", .array([.string("home"), .string("food")])),
        JSONMember("place", .object([JSONMember("city", .string("Lyon"))])),
    ])

    /// Whether the filter `text` matches `object`; a filter that does not parse is an issue.
    static func matches(_ text: String) -> Bool {
        do {
            return try ObjectFilter.parse(text).matches(object)
        } catch {
            Issue.record("\(text): \(error)")
            return false
        }
    }

    @Test func comparisonsOfEachKind() {
        #expect(Self.matches("id == 18446744073709551615") && !(Self.matches("id == 18446744073709551614")))
        #expect(Self.matches("score > 2 and score <= 2.5 and count < 0 and count >= -3"))
        #expect(Self.matches("title startsWith \"Shop\"") && !(Self.matches("title startsWith 'shop'")))
        #expect(Self.matches("title endsWith 'list' and title contains \"ping l\""))
        #expect(Self.matches("tags contains 'food'") && !(Self.matches("tags contains 'work'")))
        #expect(Self.matches("done == false and not done == true and done != true"))
        #expect(Self.matches("text is null and title is not null and missing is null"))
        #expect(Self.matches("place.city == 'Lyon'") && !(Self.matches("place.zip == 'Lyon'")))
        // Values of different kinds are never equal, never ordered.
        #expect(!(Self.matches("title == 1")) && !(Self.matches("score < 'z'")) && (Self.matches("title != 1")))
        #expect(Self.matches("title == \"Shopping list\"") && (Self.matches("title = 'Shopping list'")))
        #expect(!Self.matches("title == 'say \\'hi\\''"))
    }

    @Test func andBindsTighterThanOrAndParenthesesGroup() {
        #expect(Self.matches("done == true and count == 1 or score == 2.5"))
        #expect(!(Self.matches("done == true and (count == 1 or score == 2.5)")))
        #expect(Self.matches("not (done == true) && (count == 1 || score == 2.5)"))
        #expect(Self.matches("!(done == true)"))
    }

    @Test func errorsSayWhereAndWhat() {
        func message(_ text: String, known: Set<String>? = nil) -> String {
            do {
                _ = try ObjectFilter.parse(text, knownNames: known)
                return "parsed"
            } catch let error as CellarError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(message("title == 'open") .contains("not closed"))
        #expect(message("title ==").contains("found the end"))
        #expect(message("title ~ 3").contains("expected a comparison"))
        #expect(message("title == 3 extra").contains("character 12: unexpected"))
        #expect(message("(title == 3").contains("expected )"))
        #expect(message("titel == 3", known: ["title", "id"]).contains("no property titel (there are id, title)"))
        #expect(message("== 3").contains("expected a property name"))
        #expect(message("score > 1.2.3").contains("is not a number"))
    }
}
