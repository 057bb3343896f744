/// A full-text condition (`Note.text.matches("swift -sqlite data*")`), checked against the store's
/// model: the property is a String, and the query string is parsed (`FullTextQuery`).
///
/// On a record it tokenizes the text as the index does and checks the words (a scan, or the
/// records an index gave as candidates for another condition); with a full-text index on the
/// property the planner reads the postings instead (`FullTextIndex.matchingIds`).
struct FullTextLeaf {
    let property: PropertySchema
    let query: FullTextQuery

    init(_ condition: PropertyCondition, property: PropertySchema) throws {
        let what = "\(property.qualifiedName) matches"
        guard condition.subject == .value, property.kind.isString, property.collection == nil else {
            throw CellarError.illegalArgument("query condition \(what): full-text search is for String properties; \(property.name) is a \(property.type)")
        }
        guard condition.values.count == 1, case .string(let text) = condition.values[0] else {
            throw CellarError.illegalArgument("query condition \(what): takes one query string, got \(condition.values.map(\.description).joined(separator: ", "))")
        }
        self.property = property
        query = try FullTextQuery.parse(text)
    }

    /// Whether a stored text (nil: absent) meets the query.
    func evaluate(_ value: FieldValue?) throws -> Bool {
        guard case .bytes(let text)? = value else { return false }
        return query.matches(FullTextDocument(utf8: text))
    }

    /// Whether the property has a full-text index the planner can read.
    var index: IndexSchema? {
        guard let index = property.index, index.kind == .fullText else { return nil }
        return index
    }
}

extension Property {
    /// A full-text condition on a String property: the objects whose text has every word of
    /// `query`, as Realm's full-text search takes it.
    ///
    /// - `"swift database"`: both words, anywhere in the text, in any order;
    /// - `"swift -sqlite"`: `swift` and not `sqlite`;
    /// - `"data*"`: a word starting with `data`.
    ///
    /// Words are compared ignoring case and diacritics (`Café` matches `cafe`); there is no
    /// stemming. With `// cellar: index = "fulltext"` on the property the condition reads the
    /// index; without it, each object's text is read. A malformed query (empty, a lone `-` or
    /// `*`, only exclusions) makes the query throw ``CellarError/Code/illegalArgument`` when it
    /// is built or run. Combine it with other conditions with `&&` and `||`; rank the results
    /// with ``QueryBuilder/ordered(byRelevanceTo:)``.
    public func matches(_ query: String) -> QueryCondition<E> {
        condition(.matches, [.string(query)])
    }
}
