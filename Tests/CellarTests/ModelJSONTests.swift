import Foundation
import Testing
@_spi(CellarGenerated) @_spi(Testing) @testable import Cellar
import CellarTestSupport

/// The example model file of ObjectBox's example project (CellarTestSupport/SeedModel.swift).
private let seedModel = ModelJSONSeed.text

/// The message of the `CellarError.schema` that `body` throws (nil when it throws nothing).
private func schemaMessage(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as CellarError where error.code == .schema {
        let message = error.message
        return message
    } catch {
        return "not a schema error: \(error)"
    }
}

/// The schema error message for reading `text` as a model file.
private func modelError(_ text: String) -> String? {
    schemaMessage { _ = try Model(json: Array(text.utf8)) }
}

/// The schema error message for parsing `text` as JSON.
private func jsonError(_ text: String) -> String? {
    schemaMessage { _ = try JSONParser.parse(Array(text.utf8), source: "t.json") }
}

private func jsonError(bytes: [UInt8]) -> String? {
    schemaMessage { _ = try JSONParser.parse(bytes, source: "t.json") }
}

/// The seed with `old` replaced by `new` (which must occur).
private func seed(replacing old: String, with new: String) -> String {
    precondition(seedModel.contains(old), "not in the seed: \(old)")
    return seedModel.replacing(old, with: new)
}

/// A model file error: the seed with `old` replaced by `new` must fail with a message containing
/// `expected`. (Shown in test output by its expected message only.)
struct ErrorCase: Sendable, CustomTestStringConvertible {
    var old: String
    var new: String
    var expected: String

    init(_ values: (String, String, String)) {
        (old, new, expected) = values
    }

    var testDescription: String { String(expected.prefix(70)) }
}

@Suite struct ModelJSONTests {
    // MARK: The seed's file

    @Test func seedLoads() throws {
        let model = try Model(json: Array(seedModel.utf8))
        #expect(model.entities.map(\.name) == ["Author", "Note"])
        #expect(model.lastEntityId == IdUid(id: 2, uid: 5608901830082711040))
        #expect(model.lastIndexId == IdUid(id: 1, uid: 6069708401898380544))
        #expect(model.lastRelationId == .zero && model.lastSequenceId == .zero)
        #expect(model.modelVersion == 5 && model.modelVersionParserMinimum == 4 && model.version == 1)
        #expect(model.retiredEntityUids.isEmpty && model.retiredIndexUids.isEmpty)
        #expect(model.retiredPropertyUids.isEmpty && model.retiredRelationUids.isEmpty)
        #expect(model.extra.map(\.name) == ["_note1", "_note2", "_note3"])
        #expect(model.extra[0].value == .string("KEEP THIS FILE! Check it into a version control system (VCS) like git."))

        let author = try #require(model.entity(named: "Author"))
        #expect(author.id == IdUid(id: 1, uid: 712683617673955584))
        #expect(author.lastPropertyId == IdUid(id: 2, uid: 5025387500910526208))
        #expect(author.properties.map(\.name) == ["id", "name"])
        #expect(author.properties[0].flags == .id && author.properties[0].type == .long)
        #expect(author.properties[1].flags == [] && author.properties[1].type == .string)
        #expect(author.relations.isEmpty && author.flags == nil && author.extra.isEmpty)

        let note = try #require(model.entity(named: "Note"))
        #expect(note.properties.map(\.name) == ["id", "title", "text", "creationDate", "modificationDate", "author"])
        #expect(note.properties[3].type == .date)
        let ref = try #require(note.property(named: "author"))
        #expect(ref.id == IdUid(id: 6, uid: 6001769173142034944))
        #expect(ref.flags.rawValue == 520 && ref.flags == [.indexed, .indexPartialSkipZero])
        #expect(ref.type == .relation && ref.type.rawValue == 11)
        #expect(ref.indexId == IdUid(id: 1, uid: 6069708401898380544))
        #expect(ref.relationTarget == "Author")
        #expect(ref.extra.isEmpty)
        #expect(note.properties[1].indexId == nil && note.properties[1].relationTarget == nil)
    }

    @Test func seedWritesBackByteIdentical() throws {
        let model = try Model(json: Array(seedModel.utf8))
        #expect(model.jsonString() == seedModel + "\n")
        #expect(model.jsonBytes() == Array((seedModel + "\n").utf8))
        // Without the trailing newline the same model is read.
        #expect(try Model(json: model.jsonBytes()) == model)
    }

    // MARK: Round trips

    @Test func unknownMembersSurviveAtEveryLevel() throws {
        // Already in the written layout (members sorted by name), so it must come back unchanged.
        let text = """
        {
          "_note1": "keep",
          "entities": [
            {
              "future": {
                "z": 1.50e+3,
                "a": [
                  null,
                  true,
                  false,
                  -0,
                  "s"
                ]
              },
              "id": "1:10",
              "lastPropertyId": "1:11",
              "name": "A",
              "properties": [
                {
                  "comment": "x\\u0001\\"y\\" / é",
                  "id": "1:11",
                  "name": "id",
                  "type": 6,
                  "zz": {}
                }
              ],
              "relations": [
                {
                  "id": "1:12",
                  "name": "r",
                  "other": [],
                  "targetId": "1:10"
                }
              ]
            }
          ],
          "lastEntityId": "1:10",
          "lastIndexId": "0:0",
          "lastRelationId": "1:12",
          "lastSequenceId": "0:0",
          "modelVersion": 5,
          "modelVersionParserMinimum": 4,
          "newTopLevel": 12345678901234567890123,
          "retiredEntityUids": [],
          "retiredIndexUids": [],
          "retiredPropertyUids": [],
          "retiredRelationUids": [],
          "version": 1
        }

        """
        let model = try Model(json: Array(text.utf8))
        #expect(model.extra.map(\.name) == ["_note1", "newTopLevel"])
        #expect(model.extra[1].value == .number("12345678901234567890123"))
        let entity = try #require(model.entities.first)
        #expect(entity.extra.map(\.name) == ["future"])
        guard case .object(let future) = entity.extra[0].value else { Issue.record("not an object"); return }
        #expect(future.map(\.name) == ["z", "a"])  // nested members keep their order
        #expect(future[0].value == .number("1.50e+3"))
        #expect(entity.properties[0].extra.map(\.name) == ["comment", "zz"])
        #expect(entity.properties[0].extra[0].value == .string("x\u{1}\"y\" / é"))
        #expect(entity.relations[0].extra == [JSONMember("other", .array([]))])
        #expect(entity.relations[0].targetId == IdUid(id: 1, uid: 10))
        #expect(model.jsonString() == text)
    }

    @Test func unknownMembersAreSortedIn() throws {
        // Out of order in the file: written sorted, and the written form reads as the same model.
        let text = seed(replacing: "\"_note1\"", with: "\"zLast\": [1, {\"b\": 2, \"a\": 3}],\n  \"_note1\"")
        let model = try Model(json: Array(text.utf8))
        #expect(model.extra.map(\.name) == ["_note1", "_note2", "_note3", "zLast"])
        let written = model.jsonString()
        #expect(written.contains("  \"version\": 1,\n  \"zLast\": [\n    1,\n    {\n      \"b\": 2,\n      \"a\": 3\n    }\n  ]\n}\n"))
        let again = try Model(json: Array(written.utf8))
        #expect(again == model)
        #expect(again.jsonString() == written)
    }

    @Test func codeBuiltModelIsStable() throws {
        let model = Model(
            entities: [
                ModelEntity(name: "Ünïcödé 名前 😀", id: IdUid(id: 1, uid: 1), lastPropertyId: IdUid(id: 2, uid: UInt64.max),
                            properties: [
                                ModelProperty(name: "id", id: IdUid(id: 1, uid: 2), type: .long, flags: [.id, .unsigned]),
                                ModelProperty(name: "q\"u\\o/t\u{0}e\n\t\u{1F}", id: IdUid(id: UInt32.max, uid: UInt64.max),
                                              type: PropertyType(rawValue: Int.max), flags: PropertyFlags(rawValue: UInt32.max),
                                              indexId: IdUid(id: 3, uid: 4), relationTarget: ""),
                            ],
                            relations: [ModelRelation(name: "", id: IdUid(id: 1, uid: 5), targetId: IdUid(id: 1, uid: 1))],
                            flags: 0,
                            extra: [JSONMember("aa", .array([.array([]), .object([JSONMember("", .null)])])), JSONMember("zz", .object([]))]),
                ModelEntity(name: "", id: .zero, lastPropertyId: .zero, properties: []),
            ],
            lastEntityId: IdUid(id: 1, uid: 1),
            retiredEntityUids: [0, UInt64.max],
            retiredRelationUids: [7],
            modelVersion: 0, modelVersionParserMinimum: 0, version: Int.max,
            extra: [])
        let first = model.jsonString()
        let read = try Model(json: Array(first.utf8))
        #expect(read == model)
        #expect(read.jsonString() == first)
        // Minimal escaping; non-ASCII and "/" as they are.
        #expect(first.contains(#""name": "q\"u\\o/t\u0000e\n\t\u001f","#))
        #expect(first.contains(#""name": "Ünïcödé 名前 😀","#))
        #expect(first.contains("\"properties\": [],\n      \"relations\": []\n    }\n  ],"))
        #expect(first.contains("\"flags\": 0,"))  // an entity's flags are written when set, even 0
        #expect(first.contains("\"retiredEntityUids\": [\n    0,\n    18446744073709551615\n  ],"))
        #expect(first.hasPrefix("{\n  \"entities\": [\n    {\n      \"aa\": [\n        [],\n        {\n          \"\": null\n        }\n      ],"))
        #expect(first.hasSuffix("  \"version\": 9223372036854775807\n}\n"))
    }

    @Test func extraNamedLikeKnownMembersIsNotWritten() throws {
        var model = try Model(json: Array(seedModel.utf8))
        model.extra += [JSONMember("version", .number("99")), JSONMember("_note1", .string("second"))]
        model.entities[0].properties[0].extra = [JSONMember("flags", .number("3"))]
        #expect(model.jsonString() == seedModel + "\n")
    }

    @Test func optionalMembersMayBeMissing() throws {
        var text = seedModel
        for name in ["retiredEntityUids", "retiredIndexUids", "retiredPropertyUids", "retiredRelationUids"] {
            text = text.replacing("  \"\(name)\": [],\n", with: "")
        }
        text = text.replacing("      \"relations\": []\n", with: "      \"relations\": [],\n      \"flags\": 0\n")
            .replacing("\"flags\": 520", with: "\"flags\": 0")
        let model = try Model(json: Array(text.utf8))
        #expect(model.retiredEntityUids.isEmpty && model.entities[0].flags == 0)
        #expect(model.entities[1].properties[5].flags == [])
        let written = model.jsonString()
        #expect(written.contains("\"retiredIndexUids\": [],"))
        #expect(!written.contains("\"flags\": 520"))  // a property's flags 0 are not written
        #expect(try Model(json: Array(written.utf8)) == model)
    }

    @Test func loadAndWriteFiles() throws {
        let path = "/tmp/cellar-model-json-test-\(UInt64.random(in: 0...UInt64.max)).json"
        let model = try Model(json: Array(seedModel.utf8))
        try model.write(path: path)
        #expect(try Model.load(path: path) == model)
        try model.write(path: path)  // replaces
        #expect(try Model.load(path: path) == model)
        let missing = schemaMessage { _ = try Model.load(path: path + ".missing") }
        #expect(missing == "\(path).missing: cannot read the model file: No such file or directory")
        let unwritable = schemaMessage { try model.write(path: "/nonexistent-dir-cellar/model.json") }
        #expect(unwritable?.hasPrefix("/nonexistent-dir-cellar/model.json: cannot write the model file: ") == true)
        // Errors in a loaded file name its path.
        #expect(FileManager.default.createFile(atPath: path, contents: Data("{\n  \"entities\": {},\n  \"modelVersionParserMinimum\": 4\n}\n".utf8)))
        #expect(schemaMessage { _ = try Model.load(path: path) } == "\(path): \"entities\" must be an array, got an object")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        #expect(schemaMessage { _ = try Model.load(path: path) } == "\(path): no JSON value: the input is empty at line 1 column 1")
        try FileManager.default.removeItem(atPath: path)
    }

    // MARK: Model errors

    @Test(arguments: [
        // Wrong JSON types.
        ("\"lastEntityId\": \"2:5608901830082711040\"", "\"lastEntityId\": 2",
         "model.json: \"lastEntityId\" must be \"ID:UID\", got the number 2"),
        ("\"modelVersion\": 5", "\"modelVersion\": \"5\"",
         "model.json: \"modelVersion\" must be an integer from 0 to 9223372036854775807, got the string \"5\""),
        ("\"retiredIndexUids\": []", "\"retiredIndexUids\": {}",
         "model.json: \"retiredIndexUids\" must be an array, got an object"),
        ("\"name\": \"Note\"", "\"name\": null",
         "model.json: entities[1]: \"name\" must be a string, got null"),
        ("\"relationTarget\": \"Author\"", "\"relationTarget\": [\"Author\"]",
         "model.json: entities[1] \"Note\": properties[5] \"author\": \"relationTarget\" must be a string, got an array"),
        ("\"relations\": []\n    }\n  ],", "\"relations\": [true]\n    }\n  ],",
         "model.json: entities[1] \"Note\": relations[0] must be an object, got true"),
        ("\"entities\": [\n    {", "\"entities\": [\n    7, {",
         "model.json: entities[0] must be an object, got the number 7"),
        // Missing members.
        ("  \"lastEntityId\": \"2:5608901830082711040\",\n", "",
         "model.json: the member \"lastEntityId\" is missing (it must be a string \"ID:UID\")"),
        ("\"entities\"", "\"Entities\"",
         "model.json: the member \"entities\" is missing (it must be an array)"),
        ("          \"name\": \"title\",\n", "",
         "model.json: entities[1] \"Note\": properties[1]: the member \"name\" is missing (it must be a string)"),
        ("          \"name\": \"title\",\n          \"type\": 9", "          \"name\": \"title\"",
         "model.json: entities[1] \"Note\": properties[1] \"title\": the member \"type\" is missing (it must be an integer from 0 to 9223372036854775807)"),
        // Malformed "ID:UID".
        ("\"indexId\": \"1:6069708401898380544\"", "\"indexId\": \"x\"",
         "model.json: entities[1] \"Note\": properties[5] \"author\": \"indexId\" must be \"ID:UID\", got \"x\" (two decimal numbers: an ID up to 4294967295 and a UID up to 18446744073709551615)"),
        ("\"id\": \"2:5608901830082711040\"", "\"id\": \"4294967296:1\"",
         "model.json: entities[1] \"Note\": \"id\" must be \"ID:UID\", got \"4294967296:1\""),
        ("\"lastIndexId\": \"1:6069708401898380544\"", "\"lastIndexId\": \"1:-5\"",
         "model.json: \"lastIndexId\" must be \"ID:UID\", got \"1:-5\""),
        ("\"lastRelationId\": \"0:0\"", "\"lastRelationId\": \" 0:0\"",
         "\"lastRelationId\" must be \"ID:UID\", got \" 0:0\""),
        // Numbers: negative, not whole, out of range.
        ("\"type\": 10", "\"type\": -1",
         "model.json: entities[1] \"Note\": properties[3] \"creationDate\": \"type\" must be an integer from 0 to 9223372036854775807, got -1 (negative)"),
        ("\"flags\": 520", "\"flags\": 520.0",
         "\"author\": \"flags\" must be an integer from 0 to 4294967295, got 520.0 (not a whole number written with digits only)"),
        ("\"type\": 11", "\"type\": 1e1",
         "\"author\": \"type\" must be an integer from 0 to 9223372036854775807, got 1e1 (not a whole number"),
        ("\"flags\": 520", "\"flags\": 4294967296",
         "\"flags\" must be an integer from 0 to 4294967295, got 4294967296 (too large)"),
        ("\"type\": 9\n        }\n      ],\n      \"relations\": []\n    },", "\"type\": 9223372036854775808\n        }\n      ],\n      \"relations\": []\n    },",
         "model.json: entities[0] \"Author\": properties[1] \"name\": \"type\" must be an integer from 0 to 9223372036854775807, got 9223372036854775808 (too large)"),
        ("\"retiredPropertyUids\": []", "\"retiredPropertyUids\": [1, 18446744073709551616]",
         "model.json: \"retiredPropertyUids\"[1] must be an integer from 0 to 18446744073709551615, got 18446744073709551616 (too large)"),
        ("\"retiredRelationUids\": []", "\"retiredRelationUids\": [\"1\"]",
         "model.json: \"retiredRelationUids\"[0] must be an integer from 0 to 18446744073709551615, got the string \"1\""),
        ("\"flags\": 1,", "\"flags\": -0,",
         "\"flags\" must be an integer from 0 to 4294967295, got -0 (negative)"),
        ("\"version\": 1", "\"version\": 1.5",
         "model.json: \"version\" must be an integer from 0 to 9223372036854775807, got 1.5"),
        // A newer format.
        ("\"modelVersionParserMinimum\": 4", "\"modelVersionParserMinimum\": 6",
         "model.json: the file is in a newer model format: \"modelVersionParserMinimum\" is 6, and this version of Cellar reads formats up to 5. Update Cellar to use this file"),
        // Syntax errors name the line and column.
        ("\"name\": \"Author\",", "\"name\": \"Author\"",
         "model.json: expected ',' or '}' after an object member, found '\"' at line 10 column 7"),
        ("\"version\": 1\n}", "\"version\": 1\n}\n}",
         "model.json: unexpected '}' after the end of the JSON value (only whitespace may follow it) at line 80 column 1"),
    ].map(ErrorCase.init))
    func modelErrors(_ test: ErrorCase) {
        let message = modelError(seed(replacing: test.old, with: test.new))
        let expected = test.expected
        #expect(message?.contains(expected) == true, "\(message ?? "no error")")
    }

    @Test func topLevelMustBeAnObject() {
        #expect(modelError("[]") == "model.json: the top level must be an object, got an empty array")
        #expect(modelError(" \"x\" ") == "model.json: the top level must be an object, got the string \"x\"")
        #expect(schemaMessage { _ = try Model(json: Array("7".utf8), file: "model-Notes.json") }
                    == "model-Notes.json: the top level must be an object, got the number 7")
    }

    @Test func newerFormatIsReportedBeforeOtherProblems() {
        let message = modelError(#"{"modelVersionParserMinimum": 7, "entities": "whatever"}"#)
        #expect(message?.contains("newer model format") == true)
        #expect(modelError(#"{"modelVersionParserMinimum": 5, "entities": "x"}"#)?.contains("\"entities\" must be an array") == true)
    }

    @Test func longValuesAreShortenedInMessages() {
        let long = String(repeating: "x", count: 500)
        let message = modelError(seed(replacing: "\"lastSequenceId\": \"0:0\"", with: "\"lastSequenceId\": \"\(long)\""))
        #expect(message?.contains("got \"" + String(repeating: "x", count: 57) + "...\"") == true)
        #expect((message?.count ?? 0) < 250)
    }

    // MARK: Parser

    @Test func parsesValuesKeepingOrderAndNumberText() throws {
        let value = try JSONParser.parse(Array(#" {"b": [1, -0, 0.5, 1e5, -1.5E-3, 2e+10, 123456789012345678901234567890], "a": {"": null, "t": true, "f": false}} "#.utf8))
        #expect(value == .object([
            JSONMember("b", .array(["1", "-0", "0.5", "1e5", "-1.5E-3", "2e+10", "123456789012345678901234567890"].map { .number($0) })),
            JSONMember("a", .object([JSONMember("", .null), JSONMember("t", .bool(true)), JSONMember("f", .bool(false))])),
        ]))
        #expect(try JSONParser.parse(Array("\t\r\n\"s\"\n".utf8)) == .string("s"))
        #expect(try JSONParser.parse(Array("-0".utf8)) == .number("-0"))
    }

    @Test(arguments: ["01", "-01", "-", "+1", "1.", ".5", "1e", "1e+", "1.e5", "0x10", "1_000", "--1", "Infinity", "NaN", "-a"])
    func rejectsBadNumbers(text: String) {
        #expect(jsonError(text)?.hasPrefix("t.json: ") == true, "\(text)")
    }

    @Test func numberErrorMessages() {
        #expect(jsonError("[01]") == "t.json: a number must not start with 0 followed by more digits (leading zeros are not allowed) at line 1 column 2")
        #expect(jsonError("1.") == "t.json: expected a digit after the decimal point at line 1 column 3")
        #expect(jsonError("1e") == "t.json: expected a digit in the exponent at line 1 column 3")
        #expect(jsonError("-x") == "t.json: expected a digit after '-', found 'x' at line 1 column 2")
    }

    @Test func escapesAndSurrogates() throws {
        let parsed = try JSONParser.parse(Array(#""\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC\uD83D\uDE00\u0000""#.utf8))
        #expect(parsed == .string("\"\\/\u{8}\u{C}\n\r\tAé€😀\u{0}"))
        #expect(jsonError(#""\uD83D""#) == #"t.json: lone surrogate \uD83D: a high surrogate must be followed by a low one (\uDC00 to \uDFFF) at line 1 column 2"#)
        #expect(jsonError(#""\uD83Dx""#)?.contains("lone surrogate") == true)
        #expect(jsonError(#""\uD83D\u0041""#)?.contains(#"it is followed by \u0041, not by a low surrogate"#) == true)
        #expect(jsonError(#""\uDE00\uD83D""#) == #"t.json: lone surrogate \uDE00: a low surrogate without a high one before it at line 1 column 2"#)
        #expect(jsonError(#""\uD83D\uD83D""#)?.contains("lone surrogate") == true)
        #expect(jsonError(#""\u12G4""#) == "t.json: a \\u escape needs four hex digits, found 'G' at line 1 column 6")
        #expect(jsonError(#""\u12"#)?.contains("unexpected end of the input in a \\u escape") == true)
        #expect(jsonError(#""\x""#) == #"t.json: invalid escape sequence \x (valid: \" \\ \/ \b \f \n \r \t \uXXXX) at line 1 column 2"#)
        #expect(jsonError(#""\'""#)?.contains("invalid escape sequence") == true)
        #expect(jsonError("\"\\") == "t.json: unexpected end of the input in an escape sequence at line 1 column 3")
    }

    @Test func rejectsControlCharactersAndBadUTF8() throws {
        #expect(jsonError("[\"a\tb\"]") == "t.json: control character U+0009 in a string (write it as an escape: \\n, \\t, \\r, \\b, \\f or \\u0009) at line 1 column 4")
        #expect(jsonError("\"a\nb\"")?.contains("control character U+000A") == true)
        #expect(jsonError(bytes: [0x22, 0x1F, 0x22])?.contains("control character U+001F") == true)
        #expect(try JSONParser.parse([0x22, 0x7F, 0x22]) == .string("\u{7F}"))  // DEL is not a control character in JSON
        // Valid: 2, 3 and 4 bytes.
        #expect(try JSONParser.parse([0x22, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80, 0x22]) == .string("é€😀"))
        let invalid: [[UInt8]] = [
            [0xC0, 0x80],              // overlong NUL
            [0xE0, 0x80, 0x80],        // overlong
            [0xED, 0xA0, 0x80],        // encoded surrogate
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0xF5, 0x80, 0x80, 0x80],
            [0x80],                    // stray continuation
            [0xFF],
            [0xE2, 0x82],              // cut short
            [0xC3, 0x41],
        ]
        for sequence in invalid {
            let message = jsonError(bytes: [0x22] + sequence + [0x22])
            #expect(message?.contains("invalid UTF-8") == true && message?.hasSuffix("at line 1 column 2") == true, "\(sequence): \(message ?? "accepted")")
        }
        #expect(jsonError(bytes: [0x22, 0xE2, 0x82]) != nil)  // cut short by the end of input
        #expect(jsonError(bytes: [0xC3, 0xA9])?.contains("expected a value") == true)  // outside a string
    }

    @Test func nestingDepthIsLimited() throws {
        let limit = JSONParser.maximumDepth
        #expect(throws: Never.self) { try JSONParser.parse(Array((String(repeating: "[", count: limit) + String(repeating: "]", count: limit)).utf8)) }
        #expect(jsonError(String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1))
                    == "t.json: arrays and objects are nested deeper than 64 levels at line 1 column 65")
        #expect(jsonError(String(repeating: "{\"a\":", count: limit + 1) + "1" + String(repeating: "}", count: limit + 1))?
                    .contains("nested deeper than 64 levels") == true)
        // Far deeper than any stack would allow if it were followed: rejected, not crashed.
        #expect(jsonError(String(repeating: "[", count: 1_000_000))?.contains("nested deeper") == true)
        #expect(jsonError(String(repeating: "[{\"\":", count: 500_000))?.contains("nested deeper") == true)
    }

    @Test func structuralErrors() {
        #expect(jsonError("") == "t.json: no JSON value: the input is empty at line 1 column 1")
        #expect(jsonError(" \n ") == "t.json: no JSON value: the input is only whitespace at line 2 column 2")
        #expect(jsonError("{} x") == "t.json: unexpected 'x' after the end of the JSON value (only whitespace may follow it) at line 1 column 4")
        #expect(jsonError("{}{}") != nil)
        #expect(jsonError("[1,]") == "t.json: a comma before ']' (trailing commas are not allowed) at line 1 column 4")
        #expect(jsonError("{\"a\": 1,}") == "t.json: a comma before '}' (trailing commas are not allowed) at line 1 column 9")
        #expect(jsonError("{,}")?.contains("expected a member name in double quotes, found ','") == true)
        #expect(jsonError("{\"a\" 1}") == "t.json: expected ':' after the member name \"a\", found '1' at line 1 column 6")
        #expect(jsonError("{\"a\": 1, \"é\": 2,\n \"a\": 3}") == "t.json: the member name \"a\" appears twice in the same object at line 2 column 2")
        #expect(jsonError("{\"é\": 1, \"e\u{301}\": 2}") == nil)  // different bytes: different names
        #expect(jsonError("[\n  {\"a\": [1, 2}\n]") == "t.json: expected ',' or ']' after an array element, found '}' at line 2 column 14")
        #expect(jsonError("{\"a\": [1,\n") == "t.json: unexpected end of the input: the array opened at line 1 column 7 is not closed at line 2 column 1")
        #expect(jsonError("{\"a\": 1") == "t.json: unexpected end of the input: the object opened at line 1 column 1 is not closed at line 1 column 8")
        #expect(jsonError("\"abc") == "t.json: unexpected end of the input: the string opened at line 1 column 1 is not closed at line 1 column 5")
        #expect(jsonError("[tru]") == "t.json: invalid literal (expected true, false or null) at line 1 column 2")
        #expect(jsonError("nul") != nil && jsonError("True") != nil && jsonError("truex") != nil)
        #expect(jsonError("'a'") == "t.json: expected a value (an object, array, string, number, true, false or null), found \"'\" at line 1 column 1")
        #expect(jsonError("[\u{1}]")?.contains("found byte 0x01") == true)
        #expect(jsonError("é x")?.contains("byte 0xC3") == true)
        #expect(jsonError("\"é\" x") == "t.json: unexpected 'x' after the end of the JSON value (only whitespace may follow it) at line 1 column 5")
        #expect(jsonError(bytes: [0xEF, 0xBB, 0xBF, 0x7B, 0x7D])?.contains("byte order mark") == true)
    }

    // MARK: Writer

    @Test func writerLayoutAndEscaping() throws {
        let value = JSONValue.object([
            JSONMember("s", .string("a\"b\\c/d\u{8}\u{C}\n\r\t\u{0}\u{1B}\u{7F}é😀")),
            JSONMember("e", .array([])),
            JSONMember("o", .object([])),
            JSONMember("a", .array([.number("1"), .null, .bool(true), .object([JSONMember("k\n", .bool(false))])])),
        ])
        let expected = """
        {
          "s": "a\\"b\\\\c/d\\b\\f\\n\\r\\t\\u0000\\u001b\u{7F}é😀",
          "e": [],
          "o": {},
          "a": [
            1,
            null,
            true,
            {
              "k\\n": false
            }
          ]
        }
        """
        #expect(JSONWriter.string(value) == expected)
        #expect(JSONWriter.string(.string("")) == "\"\"")
        #expect(try JSONParser.parse(JSONWriter.bytes(value)) == value)
    }
}
