@_spi(Tools) import Cellar
import CellarStorage

/// Prints the objects of the store in `directory` (of `entity` only, when given; those that match
/// `condition`, when given; at most `limit`):
/// one JSON object per line, or a table per entity whose columns are the properties.
func dump(_ directory: String, entity: String?, where condition: String?, limit: Int, jsonLines: Bool, options: StorageOptions) throws {
    let engine = try StorageEngine(directory: directory, options: options)
    defer { engine.close() }
    guard try StoreSummary.read(engine).model != nil else {
        throw ToolError("the store in \(directory) holds no model (a store of the storage engine alone): nothing to decode objects with")
    }
    var table = DumpTable()
    try ObjectDump.forEachObject(in: engine, entity: entity, filter: condition, limit: limit) { name, object in
        if jsonLines {
            print(JSONWriter.compact(.object([JSONMember("entity", .string(name)), JSONMember("object", object)])))
        } else {
            table.add(object, of: name)
        }
    }
    if !jsonLines { table.print() }
}

/// The table form of `cellar dump`: one block per entity, a column per property, cells cut at 40
/// characters.
struct DumpTable {
    private var blocks: [(entity: String, columns: [String], rows: [[String]])] = []
    static let cellWidth = 40

    mutating func add(_ object: JSONValue, of entity: String) {
        guard case .object(let members) = object else { return }
        if blocks.last?.entity != entity { blocks.append((entity, members.map(\.name), [])) }
        blocks[blocks.count - 1].rows.append(members.map { Self.cell($0.value) })
    }

    static func cell(_ value: JSONValue) -> String {
        var text: String
        if case .string(let string) = value { text = string } else { text = JSONWriter.compact(value) }
        text = text.replacingOccurrences(of: "\n", with: "⏎")
        return text.count > cellWidth ? String(text.prefix(cellWidth - 1)) + "…" : text
    }

    func print() {
        for (index, block) in blocks.enumerated() {
            if index > 0 { Swift.print() }
            Swift.print("\(block.entity) (\(block.rows.count) shown)")
            let widths = block.columns.indices.map { column in
                ([block.columns[column]] + block.rows.map { $0[column] }).map(\.count).max() ?? 0
            }
            func line(_ cells: [String]) -> String {
                zip(cells, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ")
                    .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
            }
            Swift.print(line(block.columns))
            Swift.print(line(widths.map { String(repeating: "-", count: $0) }))
            for row in block.rows { Swift.print(line(row)) }
        }
    }
}
