@_spi(CellarGenerated) @_spi(Testing) import Cellar
@testable import CellarGenerator
import CellarTestSupport
import Testing

/// Default values: what a record written before a property existed reads for it, from the
/// property's initial value or `// cellar: default`, and the code the generator writes for them.
@Suite struct DefaultValueTests {
    private func scan(_ source: String) throws -> EntityDescription {
        try #require(try SourceScanner.scan(files: [(path: "M.swift", contents: source)]).first)
    }

    /// The error lines of a scan and of the model update that follows it, against a model file
    /// that already has `E` with its id alone (so each property of `members` is new to an entity
    /// with stored objects); empty when both succeed.
    private func errors(_ source: String) -> [String] {
        do {
            var random = SplitMix64(seed: 5)
            let update = ModelUpdate(modelPath: "model-App.json")
            let before = try update.update(nil, with: SourceScanner.scan(files: [(path: "M.swift", contents: "class E: Entity {\n    var id: Id = 0\n}")]),
                                           using: &random)
            _ = try update.update(before, with: SourceScanner.scan(files: [(path: "M.swift", contents: source)]), using: &random)
            return []
        } catch let error as GeneratorError {
            return [error.description]
        } catch let error as GeneratorErrors {
            return error.messages
        } catch {
            return ["unexpected \(error)"]
        }
    }

    /// The one error of an entity E with `members` after its id, which must contain each fragment.
    private func expectError(_ members: String, at position: String, _ fragments: String...,
                             sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        let found = errors("class E: Entity {\n    var id: Id = 0\n\(members)\n}")
        #expect(found.count == 1, "expected one error, got \(found)", sourceLocation: sourceLocation)
        guard let first = found.first else { return }
        #expect(first.hasPrefix("M.swift:\(position): error: "), "\(first)", sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(first.contains(fragment), "\(first)\nlacks: \(fragment)", sourceLocation: sourceLocation)
        }
    }

    /// The default of property `x` declared as `declaration` (`var x: Int8 = 3`) in an entity.
    private func defaultOf(_ declaration: String, annotation: String? = nil) throws -> DefaultValue? {
        let entity = try scan("class E: Entity {\n    var id: Id = 0\n\(annotation.map { "    \($0)\n" } ?? "")    \(declaration)\n}")
        return try #require(entity.properties.first { $0.name == "x" }).defaultValue
    }

    @Test func evaluatedInitialValues() throws {
        #expect(try defaultOf("var x: Int = 3") == .integer(3))
        #expect(try defaultOf("var x = -42") == .integer(-42))
        #expect(try defaultOf("var x: Int64 = 1_000_000") == .integer(1_000_000))
        #expect(try defaultOf("var x: UInt32 = 0xFF_FF") == .unsigned(65535))
        #expect(try defaultOf("var x: UInt8 = 0b1010") == .unsigned(10))
        #expect(try defaultOf("var x: Int16 = 0o17") == .integer(15))
        #expect(try defaultOf("var x: Int8 = -128") == .integer(-128))
        #expect(try defaultOf("var x: Int8 = 127") == .integer(127))
        #expect(try defaultOf("var x: Int64 = -9223372036854775808") == .integer(Int64.min))
        #expect(try defaultOf("var x: UInt64 = 18446744073709551615") == .unsigned(UInt64.max))
        #expect(try defaultOf("var x: Id = 7") == .unsigned(7))
        #expect(try defaultOf("var x: Double = 3") == .floatingPoint(3.0))
        #expect(try defaultOf("var x = 2.5e-3") == .floatingPoint(0.0025))
        #expect(try defaultOf("var x: Double = -1_000.25") == .floatingPoint(-1000.25))
        #expect(try defaultOf("var x: Float = 0.1") == .floatingPoint(Double(Float(0.1))))
        #expect(try defaultOf("var x: Float = 16777217") == .floatingPoint(16_777_216), "an integer rounded to the nearest Float")
        #expect(try defaultOf("var x = true") == .bool(true))
        #expect(try defaultOf("var x: Bool = false") == .bool(false))
        #expect(try defaultOf(#"var x = "plain""#) == .string("plain"))
        #expect(try defaultOf(#"var x = "tab\tquote\"backslash\\ nul\0 \u{1F600}""#) == .string("tab\tquote\"backslash\\ nul\0 \u{1F600}"))
        #expect(try defaultOf(##"var x = #"raw \n "quoted""#"##) == .string(#"raw \n "quoted""#))
        #expect(try defaultOf("var x = \"\"\"\n        first\n          second\n        \"\"\"") == .string("first\n  second"))
        #expect(try defaultOf("var x = String()") == .string(""))
        #expect(try defaultOf("var x = Int()") == .integer(0))
        #expect(try defaultOf("var x = Swift.UInt16()") == .unsigned(0))
        #expect(try defaultOf("var x = Data()") == .bytes([]))
        #expect(try defaultOf("var x = [UInt8]()") == .bytes([]))
        #expect(try defaultOf("var x: [UInt8] = []") == .bytes([]))
        #expect(try defaultOf("var x: Data = [1, 0xFF]") == .bytes([1, 255]))
        #expect(try defaultOf("var x = Int32(-5)") == .integer(-5))
        #expect(try defaultOf("var x = 5 as UInt16") == .unsigned(5))
        #expect(try defaultOf("var x = Int8.max") == .integer(127))
        #expect(try defaultOf("var x = Int16.min") == .integer(-32768))
        #expect(try defaultOf("var x: UInt64 = .max") == .unsigned(UInt64.max))
        #expect(try defaultOf("var x: Double = .zero") == .floatingPoint(0))
        #expect(try defaultOf("var x = Date(timeIntervalSince1970: 1_700_000_000)") == .date(seconds: 1_700_000_000, sinceReferenceDate: false))
        #expect(try defaultOf("var x: Date = Date(timeIntervalSince1970: -0.5)") == .date(seconds: -0.5, sinceReferenceDate: false))
        #expect(try defaultOf("var x = Foundation.Date(timeIntervalSinceReferenceDate: 0.1)") == .date(seconds: 0.1, sinceReferenceDate: true))
        #expect(try defaultOf("var x = Date.distantPast") == .date(seconds: -63_114_076_800, sinceReferenceDate: true))
        #expect(try defaultOf("var x: Date = .distantFuture") == .date(seconds: 63_113_904_000, sinceReferenceDate: true))
        #expect(try defaultOf(#"var x = UUID(uuidString: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")!"#) == .uuid("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
    }

    /// A Decimal's literal is kept as written (Swift makes the value, through a Double for a
    /// fraction, as it does for the initial value); its text is read exactly.
    @Test func decimals() throws {
        #expect(try defaultOf("var x: Decimal = 0") == .decimal("0", isLiteral: true))
        #expect(try defaultOf("var x: Decimal = -1.25") == .decimal("-1.25", isLiteral: true))
        #expect(try defaultOf("var x: Foundation.Decimal = 0x10") == .decimal("0x10", isLiteral: true))
        #expect(try defaultOf(#"var x = Decimal(string: "12.50")!"#) == .decimal("12.5", isLiteral: false))
        #expect(try defaultOf("var x = Decimal()") == .decimal("0", isLiteral: true))
        #expect(try defaultOf("var x: Decimal = .zero") == .decimal("0", isLiteral: true))
        #expect(try defaultOf("var x = Decimal(7)") == .decimal("7", isLiteral: true))
        #expect(try defaultOf("var x: Decimal = compute()", annotation: "// cellar: default = 0.10") == .decimal("0.1", isLiteral: false))
        #expect(try defaultOf("var x: Decimal = compute()", annotation: #"// cellar: default = "-3e-2""#) == .decimal("-0.03", isLiteral: false))
        expectError(#"    var x = Decimal(string: "1,5")!"#, at: "3:5", #""1,5" is not a decimal number"#)
        expectError("    // cellar: default = true\n    var x: Decimal = 0", at: "3:5", "a Decimal property takes a number, read exactly")
    }

    @Test func noDefault() throws {
        // No initial value, an optional (nil whatever it starts as), enums and converters: the
        // zero value as before (enums read their convert default).
        #expect(try defaultOf("var x: Int") == nil)
        #expect(try defaultOf("var x: Int? = 5") == nil)
        #expect(try defaultOf("var x: Date? = Date()") == nil)
        #expect(try defaultOf("var x: String? = nil") == nil)
        let entity = try scan("""
        enum Mood: Int { case calm = 0, angry = 1 }
        struct Color { static let black = Color() }
        class E: Entity {
            var id: Id = 0
            // cellar: convert = { "default": ".calm" }
            var mood: Mood = .angry
            // cellar: convert = { "dbType": "String", "converter": "ColorConverter" }
            var color: Color = .black
            // cellar: convert = { "dbType": "Date", "converter": "DayConverter" }
            var day: Day = Day.today()
        }
        """)
        #expect(entity.properties.allSatisfy { $0.defaultValue == nil })
    }

    @Test func annotatedDefaults() throws {
        #expect(try defaultOf("var x: Int = compute()", annotation: "// cellar: default = -3") == .integer(-3))
        #expect(try defaultOf("var x: Int = 5", annotation: "// cellar: default = 9") == .integer(9), "the annotation wins over the initial value")
        #expect(try defaultOf("var x: UInt8", annotation: "// cellar: default = 255") == .unsigned(255))
        #expect(try defaultOf("var x: Float = f()", annotation: "// cellar: default = 1.5e3") == .floatingPoint(1500))
        #expect(try defaultOf("var x: Double = f()", annotation: "// cellar: default = 2") == .floatingPoint(2))
        #expect(try defaultOf("var x: Bool = flag()", annotation: "// cellar: default = true") == .bool(true))
        #expect(try defaultOf("var x: String = \"\\(a)\"", annotation: #"// cellar: default = "line\n\"q\" \u00e9""#) == .string("line\n\"q\" é"))
        #expect(try defaultOf("var x = Date()", annotation: #"// cellar: default = "2024-01-01T00:00:00Z""#) == .date(seconds: 1_704_067_200, sinceReferenceDate: false))
        #expect(try defaultOf("var x = Date()", annotation: #"// cellar: default = "2024-02-29T12:30:00.25+02:00""#)
                == .date(seconds: 1_709_202_600.25, sinceReferenceDate: false))
        #expect(try defaultOf("var x = Date()", annotation: #"// cellar: default = "1969-12-31T23:59:59.75Z""#) == .date(seconds: -0.25, sinceReferenceDate: false))
        #expect(try defaultOf("var x = Date()", annotation: #"// cellar: default = "2000-03-01""#) == .date(seconds: 951_868_800, sinceReferenceDate: false))
        #expect(try defaultOf("var x = Date()", annotation: "// cellar: default = -86400.5") == .date(seconds: -86400.5, sinceReferenceDate: false))
        #expect(try defaultOf("var x = UUID()", annotation: #"// cellar: default = "00000000-0000-0000-0000-000000000001""#)
                == .uuid("00000000-0000-0000-0000-000000000001"))
        #expect(try defaultOf("var x: Data = load()", annotation: "// cellar: default = [0, 7, 255]") == .bytes([0, 7, 255]))
        #expect(try defaultOf("var x: [UInt8] = load()", annotation: "// cellar: default = []") == .bytes([]))
    }

    // MARK: Errors

    @Test func newValueForEachObject() {
        expectError("    var creationDate: Date = Date()", at: "3:5",
                    "`E.creationDate` starts as `Date()`, a new value for each new object, which cannot be what records written before the property existed read",
                    "write a value the generator can read (`var creationDate: Date = Date(timeIntervalSince1970: 0)`)",
                    "or keep the initial value and name the value those records read in an annotation on the line above the property: `// cellar: default = \"2024-01-01T00:00:00Z\"`")
        expectError("    var key: UUID = UUID()", at: "3:5", "`E.key` starts as `UUID()`, a new value for each new object",
                    "`var key: UUID = UUID(uuidString: \"00000000-0000-0000-0000-000000000000\")!`",
                    "`// cellar: default = \"00000000-0000-0000-0000-000000000000\"`")
        expectError("    var seen = Date.now", at: "3:5", "`E.seen` starts as `Date.now`, a new value for each new object")
        expectError("    var seen: Date = .now", at: "3:5", "`E.seen` starts as `.now`, a new value for each new object")
    }

    /// `var created = Date()` and `var id = UUID()` are the most common lines of SwiftData and
    /// Realm models. No stored record can lack such a property when it arrives with its entity,
    /// or when the model file has it already (it was generated before): then it needs no default.
    @Test func newValueEachTimeWhereNoRecordCanLackIt() throws {
        let first = """
        class Note: Entity {
            var id: Id = 0
            var text = ""
            var creationDate: Date = Date()
            var key: UUID = UUID()
            var stamp = "n\\(1)"
            var count: Int = compute()
        }
        """
        var random = SplitMix64(seed: 6)
        let update = ModelUpdate(modelPath: "model-App.json")
        // A new entity: generated as it is, with no default (no record of it is stored yet).
        let entities = try SourceScanner.scan(files: [(path: "Note.swift", contents: first)])
        let note = try #require(entities.first)
        for name in ["creationDate", "key", "stamp", "count"] {
            let property = try #require(note.properties.first { $0.name == name })
            #expect(property.defaultValue == nil && property.initialValueProblem != nil, "\(name)")
        }
        let model = try update.update(nil, with: entities, using: &random)
        // The same sources again (the next build, or a model file the previous release wrote with
        // these lines): the model file is unchanged.
        let again = try update.update(model, with: entities, using: &random)
        #expect(again.jsonString() == model.jsonString())
        // The model read back from its file, as the plugin reads it.
        let reread = try Cellar.Model(json: Array(model.jsonString().utf8), file: "model-App.json")
        #expect(try update.update(reread, with: entities, using: &random).jsonString() == model.jsonString())
        // A second entity arriving with `Date()` beside the stored one: accepted too.
        let withTag = first + "\nclass Tag: Entity {\n    var id: Id = 0\n    var added = Date.now\n}"
        let grown = try update.update(model, with: SourceScanner.scan(files: [(path: "Note.swift", contents: withTag)]), using: &random)
        #expect(grown.entities.map(\.name) == ["Note", "Tag"])
        // The same property added to the stored entity: its stored records lack it, so the clear
        // error stays, with its two ways out.
        let added = first.replacingOccurrences(of: "    var key: UUID = UUID()", with: "    var key: UUID = UUID()\n    var edited: Date = Date()")
        let error = #expect(throws: GeneratorError.self) {
            try update.update(model, with: SourceScanner.scan(files: [(path: "Note.swift", contents: added)]), using: &random)
        }
        #expect(error?.description.hasPrefix("Note.swift:6:5: error: `Note.edited` starts as `Date()`, a new value for each new object") == true,
                "\(error?.description ?? "")")
        #expect(error?.description.contains("`// cellar: default = \"2024-01-01T00:00:00Z\"`") == true)
        // With the annotation it is accepted, and records without the property read the date.
        let annotated = added.replacingOccurrences(of: "    var edited", with: "    // cellar: default = \"2024-01-01T00:00:00Z\"\n    var edited")
        let accepted = try update.update(model, with: SourceScanner.scan(files: [(path: "Note.swift", contents: annotated)]), using: &random)
        #expect(accepted.entities[0].properties.map(\.name).contains("edited"))
    }

    /// An embedded type's objects are stored inside their owners' records: a property new to an
    /// embedded type the model file has is missing from those, like one new to an entity.
    @Test func newValueEachTimeOnAnEmbeddedType() throws {
        let source = """
        class Person: Entity {
            var id: Id = 0
            var address = Address()
        }
        // cellar: embedded
        struct Address {
            var street = ""
        MEMBER
        }
        """
        var random = SplitMix64(seed: 7)
        let update = ModelUpdate(modelPath: "model-App.json")
        let stored = try update.update(nil, with: SourceScanner.scan(files: [(path: "P.swift", contents: source.replacingOccurrences(of: "MEMBER", with: ""))]),
                                       using: &random)
        let grown = source.replacingOccurrences(of: "MEMBER", with: "    var since = Date()")
        #expect(throws: GeneratorError.self) {
            try update.update(stored, with: SourceScanner.scan(files: [(path: "P.swift", contents: grown)]), using: &random)
        }
        // Arriving with the embedded type, the same line is fine.
        _ = try update.update(nil, with: SourceScanner.scan(files: [(path: "P.swift", contents: grown)]), using: &random)
    }

    @Test func notEvaluable() {
        let cannot = "which the generator cannot evaluate: it reads literals, `T()` of built-in types, `Date(timeIntervalSince1970: <number>)`, `Date.distantPast`, `UUID(uuidString: \"…\")!`, `Decimal(string: \"…\")!`, not function calls, constants or arithmetic"
        expectError("    var x: Int = compute()", at: "3:5", "`E.x` starts as `compute()`, \(cannot)", "(`var x: Int = 0`)", "`// cellar: default = 0`")
        expectError("    var x: Int = E.start", at: "3:5", "`E.x` starts as `E.start`, \(cannot)")
        expectError("    var x: Int = limit", at: "3:5", "`E.x` starts as `limit`, \(cannot)")
        expectError("    var x: Int = 1 + 2", at: "3:5", "`E.x` starts as `1 + 2`, \(cannot)")
        expectError("    var x: Double = Double.pi", at: "3:5", "`E.x` starts as `Double.pi`, \(cannot)", "`// cellar: default = 0.0`")
        expectError("    var x: String = String(12)", at: "3:5", "`E.x` starts as `String(12)`, \(cannot)", "(`var x: String = \"\"`)")
        expectError("    var x: String = \"n\\(1)\"", at: "3:5", "`E.x` starts as `\"n\\(1)\"`, a string with interpolation, which the generator cannot evaluate",
                    "`// cellar: default = \"\"`")
        expectError("    var x: Data = Data(count: 4)", at: "3:5", "`E.x` starts as `Data(count: 4)`, \(cannot)", "(`var x: Data = Data()`)", "`// cellar: default = []`")
        expectError("    var x = UUID(uuidString: \"nope\")!", at: "3:5",
                    "`E.x` starts as `UUID(uuidString: \"nope\")!`: \"nope\" is not a UUID (UUID(uuidString:) returns nil for it, so the `!` would crash)")
    }

    @Test func wrongTypeOrRange() {
        expectError("    var x: Int8 = 300", at: "3:5", "`E.x` starts as `300`, but 300 is outside Int8's range -128...127: it is stored as Int8")
        expectError("    var x: UInt16 = -1", at: "3:5", "-1 is outside UInt16's range 0...65535")
        expectError("    var x: Int64 = 9223372036854775808", at: "3:5", "9223372036854775808 is outside Int64's range -9223372036854775808...9223372036854775807")
        expectError("    var x: UInt64 = 18446744073709551616", at: "3:5", "18446744073709551616 does not fit in 64 bits")
        expectError("    var x: Float = 1e40", at: "3:5", "`E.x` starts as `1e40`, but 1e40 is beyond Float's range (±3.4028235e+38)")
        expectError("    var x: Int = 1.5", at: "3:5", "but the number 1.5 is not a Int")
        expectError("    var x: String = 3", at: "3:5", "but the integer 3 is not a String")
        expectError("    var x: Bool = nil", at: "3:5", "nil is not a Bool (only an optional property can be nil)")
        expectError("    var x: Int = [:]", at: "3:5", "an empty collection is not a Int")
        expectError("    var x: [UInt8] = [256]", at: "3:5", "the elements of a [UInt8] must be integer literals from 0 to 255")
        expectError("    var x: Int8 = Int8(200)", at: "3:5", "200 is outside Int8's range -128...127")
    }

    @Test func annotationErrors() {
        expectError("    // cellar: default = 300\n    var x: Int8 = 0", at: "3:5",
                    "`// cellar: default = 300`: 300 is outside Int8's range -128...127; `E.x` is stored as Int8, which takes an integer in -128...127 (`default = 0`)")
        expectError("    // cellar: default = 1.5\n    var x: Int = 0", at: "3:5", "`// cellar: default = 1.5`: 1.5 is not an integer")
        expectError("    // cellar: default = 1e40\n    var x: Float = 0", at: "3:5", "1e40 is beyond Float's range")
        expectError("    // cellar: default = \"yes\"\n    var x: Bool = false", at: "3:5",
                    "`// cellar: default = \"yes\"`: a Bool property takes `true` or `false`")
        expectError("    // cellar: default = \"2024-13-01T00:00:00Z\"\n    var x = Date()", at: "3:5",
                    "\"2024-13-01T00:00:00Z\" is not an ISO 8601 date and time like \"2024-01-01T00:00:00Z\"")
        expectError("    // cellar: default = \"2024-01-01 00:00\"\n    var x = Date()", at: "3:5", "is not an ISO 8601 date and time")
        expectError("    // cellar: default = true\n    var x = Date()", at: "3:5",
                    "a Date property takes an ISO 8601 date and time (`default = \"2024-01-01T00:00:00Z\"`) or a number of seconds since 1970 (`default = 1704067200`)")
        expectError("    // cellar: default = \"x\"\n    var x = UUID()", at: "3:5", "\"x\" is not a UUID like")
        expectError("    // cellar: default = [1, 300]\n    var x = Data()", at: "3:5", "the elements must be integers from 0 to 255")
        expectError("    // cellar: default = text\n    var x = \"\"", at: "3:5", "`// cellar: default = text`: the value is not valid JSON",
                    "write `// cellar: default = …` with a JSON value of the property's stored type")
        expectError("    // cellar: default\n    var x = 0", at: "3:5", "`// cellar: default`: the value is missing")
        expectError("    // objectbox: default = 1\n    var x = 0", at: "3:5",
                    "`// objectbox: default = 1`: `default` is a Cellar annotation (ObjectBox has no equivalent); write it `// cellar: default = …`")
        expectError("    // cellar: default = 1\n    var x: Int? = nil", at: "3:5",
                    "`// cellar: default = 1` is on `E.x`, an optional: a record without the property reads nil (a stored nil is written the same way), so it has no default")
        expectError("    // cellar: default = 1\n    // cellar: default = 2\n    var x = 0", at: "4:5", "`default` is given twice")
        expectError("    // cellar: default = 1\n    var x: ToOne<E> = nil", at: "3:5", "cannot be used on the relation `E.x`")
        expectError("    // cellar: default = 1\n    // cellar: transient\n    var x = 0", at: "3:5", "is transient (not stored), so the annotation has no effect")
        let enumSource = """
        enum Mood: Int { case calm = 0 }
        class E: Entity {
            var id: Id = 0
            // cellar: default = 0
            // cellar: convert = { "default": ".calm" }
            var mood: Mood = .calm
        }
        """
        #expect(errors(enumSource) == ["M.swift:4:5: error: `// cellar: default = 0` is on `E.mood`, an enum stored by its raw value: its default is the case in `// cellar: convert = { \"default\": \".caseName\" }`; remove the annotation"])
        let converterSource = """
        class E: Entity {
            var id: Id = 0
            // cellar: default = ""
            // cellar: convert = { "dbType": "String", "converter": "ColorConverter" }
            var color: Color = .black
        }
        """
        #expect(errors(converterSource).first?.contains("`// cellar: default = \"\"` is on `E.color`, which has a converter: ColorConverter.convert makes the value of a record without the property") == true)
        // The unknown-annotation error still lists what a property accepts, `default` included.
        expectError("    // cellar: defaults = 1\n    var x = 0", at: "3:5", "`defaults` is not an annotation Cellar knows", "date-nano, default = …")
    }

    // MARK: Emitted code

    @Test func generatedReadsUseTheDefaults() throws {
        let source = """
        struct Item: Entity {
            var id: Id = 0
            var priority: Int = 3
            var small: Int8 = -128
            var ratio: Double = 3
            var scale: Float = 0.1
            var done = true
            var title = "say \\"hi\\"\\n\\\\"
            var at = Date(timeIntervalSince1970: 1_700_000_000.5)
            var ref = Date(timeIntervalSinceReferenceDate: 0.1)
            var past = Date.distantPast
            // cellar: default = "2024-01-01T00:00:00Z"
            var created = Date()
            var key = UUID(uuidString: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")!
            var blob: Data = [1, 2]
            var bytes: [UInt8] = []
            var count: UInt32
            var note: String? = "ignored"
        }
        """
        let entities = try SourceScanner.scan(files: [(path: "Item.swift", contents: source)])
        var random = SplitMix64(seed: 4)
        let model = try ModelUpdate(modelPath: "model-App.json").update(nil, with: entities, using: &random)
        let code = try CodeEmitter(targetName: "App").emit(entities: entities, model: model)
        #expect(code.contains("""
                return Item(
                    id: id,
                    priority: try record.read(Int.self, slot: 1) ?? 3,
                    small: try record.read(Int8.self, slot: 2) ?? -128,
                    ratio: try record.double(slot: 3) ?? 3.0,
                    scale: try record.float(slot: 4) ?? 0.1,
                    done: try record.bool(slot: 5) ?? true,
                    title: try record.string(slot: 6) ?? "say \\"hi\\"\\n\\\\",
                    at: try record.date(slot: 7) ?? Date(timeIntervalSince1970: 1700000000.5),
                    ref: try record.date(slot: 8) ?? Date(timeIntervalSinceReferenceDate: 0.1),
                    past: try record.date(slot: 9) ?? Date(timeIntervalSinceReferenceDate: -63114076800.0),
                    created: try record.date(slot: 10) ?? Date(timeIntervalSince1970: 1704067200.0),
                    key: try record.uuid(slot: 11) ?? UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
                    blob: try record.data(slot: 12) ?? Data([1, 2]),
                    bytes: try record.byteArray(slot: 13) ?? [],
                    count: try record.read(UInt32.self, slot: 14) ?? 0,
                    note: try record.string(slot: 15)
                )
        """), "\(code)")
    }
}
