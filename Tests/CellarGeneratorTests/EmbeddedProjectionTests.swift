@_spi(CellarGenerated) @_spi(Testing) import Cellar
@testable import CellarGenerator
import Testing

// Projections reading paths into embedded objects (`// cellar: from = "address.city"`).

/// Contact with embedded objects, followed by the projection under test (from line 23 of M.swift).
private let sources = """
class Contact: Entity {
    var id: Id = 0
    var name = ""
    var address: Address?
    var billing = Address()
    var history: [Address] = []
    required init() {}
}
// cellar: embedded
struct Address {
    var city = ""
    var note: String?
    var geo: Geo?
    var home = Geo()
}
// cellar: embedded
struct Geo {
    var lat = 0.0
    var lines: [Line] = []
}
// cellar: embedded
struct Line { var text = "" }

"""

private func projections(_ projection: String) throws -> [ProjectionDescription] {
    let files = [(path: "M.swift", contents: sources + projection)]
    return try ProjectionScanner.scan(files: files, entities: try SourceScanner.scan(files: files))
}

private func expectError(_ projection: String, at position: String, _ fragment: String,
                         sourceLocation: Testing.SourceLocation = #_sourceLocation) {
    do {
        _ = try projections(projection)
        Issue.record("no error", sourceLocation: sourceLocation)
    } catch {
        let text = "\(error)"
        #expect(text.hasPrefix("M.swift:\(position): error: "), "\(text)", sourceLocation: sourceLocation)
        #expect(text.contains(fragment), "\(text)", sourceLocation: sourceLocation)
    }
}

/// A projection of Contact with one field reading `path` as `type`.
private func row(_ path: String, _ type: String) -> String {
    "// cellar: projection = \"Contact\"\nstruct Row {\n    // cellar: from = \"\(path)\"\n    var value: \(type)\n}\n"
}

@Suite struct EmbeddedProjectionTests {
    @Test func pathsResolveThroughSingleEmbeddedObjects() throws {
        let found = try projections("""
        // cellar: projection = "Contact"
        struct Row {
            // cellar: from = "address.city"
            var city: String?
            // cellar: from = "billing.home.lat"
            var lat: Double
            // cellar: from = "billing.geo"
            var geo: Geo?
            // cellar: from = "address.home.lines"
            var lines: [Line]?
            var address: Address?
        }
        """)
        let fields = try #require(found.first).fields
        #expect(fields.map(\.name) == ["city", "lat", "geo", "lines", "address"])
        guard case .embeddedPath(let steps, let leaf) = fields[1].source else {
            Issue.record("not a path: \(fields[1].source)")
            return
        }
        #expect(steps.map(\.property.name) == ["billing", "home"] && steps.map(\.owner) == ["Contact", "Address"] && leaf.name == "lat")
        guard case .property(let address) = fields[4].source else {
            Issue.record("not a property")
            return
        }
        #expect(address.isEmbeddedObject)
    }

    @Test func pathErrors() {
        expectError(row("history.city", "String?"), at: "25:5",
                    "`Row.value` reads \"history.city\", but Contact.history is a list of embedded Address objects, which has no single city: a path goes through single embedded objects only; declare the field `[Address]` reading \"history\" instead")
        expectError(row("address.geo.lines.text", "String?"), at: "25:5",
                    "but Contact.address.geo.lines is a list of embedded Line objects, which has no single text")
        expectError(row("name.count", "Int"), at: "25:5",
                    "`Row.value` reads \"name.count\", but Contact.name is a String, not an embedded object: a path goes through properties holding embedded objects")
        expectError(row("address.town", "String?"), at: "25:5",
                    "`Row.value` reads \"address.town\", but the embedded type Address has no property `town`; its properties are city, note, geo, home")
        expectError(row("adress.city", "String?"), at: "25:5",
                    "`Row.value` reads \"adress.city\", but Contact has no property `adress`; its properties are id, name, address, billing, history")
        expectError(row("address.city", "String"), at: "25:5",
                    "`Row.value` is a String, but Contact.address is optional, so there may be no Address to read: declare it `String?`")
        expectError(row("billing.note", "String"), at: "25:5",
                    "`Row.value` is a String, but Address.note is optional (String?): declare it `String?`")
        expectError(row("billing.city", "Int"), at: "25:5",
                    "`Row.value` is an Int, but Contact.billing.city is a String: declare it `String`")
        expectError(row("address..city", "String?"), at: "25:5",
                    "`Row.value` reads \"address..city\", which is not a path: write the properties separated by single dots")
    }
}
