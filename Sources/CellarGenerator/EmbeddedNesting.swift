/// Checks how embedded types nest through their non-optional single embedded properties
/// (`var address = Address()`): every object holding one writes it, so such properties must not
/// form a cycle (an object would be infinitely deep) and their chains must stay within
/// `maxDepth`. An optional property or a list breaks a chain: it may be nil or empty.
enum EmbeddedNesting {
    /// The deepest chain of non-optional single embedded objects the generator accepts, from the
    /// outermost object. The runtime refuses writing records nested deeper than 64 levels, which
    /// leaves room for optional objects and lists below these chains.
    static let maxDepth = 32

    /// One non-optional single embedded property: `owner.property` holds a `target`.
    private struct Edge {
        var owner: EntityDescription
        var property: PropertyDescription
        var target: String

        var text: String { "\(owner.typeName).\(property.name) → \(target)" }
    }

    /// The errors of `types` (entities and embedded types as described): a cycle, reported once
    /// at the property that closes it, and each outermost type whose chain is deeper than
    /// `maxDepth`, at the property that starts it.
    static func check(_ types: [EntityDescription]) -> [GeneratorError] {
        let byName = Dictionary(types.map { ($0.typeName, $0) }, uniquingKeysWith: { first, _ in first })
        func edges(of type: EntityDescription) -> [Edge] {
            type.properties.compactMap { property in
                guard property.isEmbeddedObject, !property.isOptional, let target = property.embeddedType,
                      byName[target] != nil else { return nil }
                return Edge(owner: type, property: property, target: target)
            }
        }
        var errors: [GeneratorError] = []

        // Cycles: a depth-first walk over the embedded types; an edge back into the current path
        // closes a cycle.
        enum State { case visiting, done }
        var state: [String: State] = [:]
        var path: [Edge] = []
        var inCycle: Set<String> = []
        func visit(_ type: EntityDescription) {
            state[type.typeName] = .visiting
            for edge in edges(of: type) {
                switch state[edge.target] {
                case .visiting?:
                    let start = path.firstIndex { $0.owner.typeName == edge.target } ?? path.count
                    let cycle = Array(path[start...]) + [edge]
                    inCycle.formUnion(cycle.map(\.owner.typeName))
                    let chain = cycle.map(\.text).joined(separator: ", ")
                    errors.append(GeneratorError("`\(edge.owner.typeName).\(edge.property.name)` makes the embedded type \(edge.target) contain itself (\(chain)) through non-optional embedded objects, so each would hold another without end; make one of these properties optional (`var \(edge.property.name): \(edge.property.swiftType)?`) or a list", at: edge.property.location))
                case .done?:
                    break
                case nil:
                    path.append(edge)
                    visit(byName[edge.target]!)
                    path.removeLast()
                }
            }
            state[type.typeName] = .done
        }
        for type in types where type.isEmbedded && state[type.typeName] == nil {
            visit(type)
        }

        // Depth: the longest chain below each type (a type in a cycle counts as no nesting: the
        // cycle is reported already).
        var depths: [String: (depth: Int, chain: [Edge])] = [:]
        func depth(of type: EntityDescription) -> (depth: Int, chain: [Edge]) {
            if let known = depths[type.typeName] { return known }
            depths[type.typeName] = (0, [])   // guards against cycles while walking
            var best: (depth: Int, chain: [Edge]) = (0, [])
            if !inCycle.contains(type.typeName) {
                for edge in edges(of: type) where !inCycle.contains(edge.target) {
                    let below = depth(of: byName[edge.target]!)
                    if below.depth + 1 > best.depth { best = (below.depth + 1, [edge] + below.chain) }
                }
            }
            depths[type.typeName] = best
            return best
        }
        let contained = Set(types.flatMap { edges(of: $0).map(\.target) })
        for type in types where !contained.contains(type.typeName) {
            let (levels, chain) = depth(of: type)
            guard levels > maxDepth, let first = chain.first else { continue }
            let shown = chain.prefix(4).map(\.text).joined(separator: ", ")
            errors.append(GeneratorError("`\(type.typeName).\(first.property.name)` starts a chain of \(levels) non-optional embedded objects (\(shown), …), deeper than the \(maxDepth) levels Cellar accepts (records nest at most 64 levels deep); make a property of the chain optional or a list, or flatten the types", at: first.property.location))
        }
        return errors
    }
}
