@testable import Cellar
import Foundation
import CellarTestSupport

/// What the randomized query tests of one property type share: a drawn condition with the
/// predicate it stands for, joined in pairs, and the order queries sort optional values in.
enum RandomConditions {
    /// A condition, the predicate on objects it stands for, and its text for messages.
    typealias Drawn<E: EntityInspectable> = (condition: QueryCondition<E>, matches: (E) -> Bool, text: String)

    /// One condition `draw` gives, or half the time two of them joined by `&&`.
    static func oneOrTwo<E>(_ rng: inout SplitMix64, _ draw: (inout SplitMix64) -> Drawn<E>) -> Drawn<E> {
        let first = draw(&rng)
        guard Bool.random(using: &rng) else { return first }
        let second = draw(&rng)
        return (first.condition && second.condition, { first.matches($0) && second.matches($0) }, "\(first.text) && \(second.text)")
    }

    /// One transaction of 10 to 30 random writes, mirrored in `model`: a new object (`make`) 6
    /// times in 10 (always while there is none), an update of a stored one (`change`, given the
    /// model without it) 3 in 10, a removal 1 in 10.
    static func randomWrites<E: Entity & AnyObject>(_ store: Store, _ box: Box<E>, model: inout [Id: E], rng: inout SplitMix64,
                                                    make: (inout SplitMix64, [Id: E]) -> E,
                                                    change: (E, inout SplitMix64, [Id: E]) -> Void) throws {
        try store.runInTransaction {
            for _ in 0..<Int.random(in: 10...30, using: &rng) {
                let choice = Int.random(in: 0..<10, using: &rng)
                if choice < 6 || model.isEmpty {
                    let object = make(&rng, model)
                    let id = try box.put(object)
                    model[id.value] = object
                } else if choice < 9 {
                    let id = model.keys.sorted().randomElement(using: &rng)!
                    guard let object = try box.get(id) else { throw CellarError.illegalArgument("object \(id) is gone") }
                    model[id] = nil
                    change(object, &rng, model)
                    try box.put(object)
                    model[id] = object
                } else {
                    let id = model.keys.sorted().randomElement(using: &rng)!
                    try box.remove(id)
                    model[id] = nil
                }
            }
        }
    }

    /// `objects` in the order a query ordered by an optional property gives them: nils first in
    /// either direction, then by `order` (-1, 0, 1) reversed when `descending`, ties by id.
    static func sorted<E: Entity, V>(_ objects: [E], by value: (E) -> V?, id: (E) -> Id, descending: Bool,
                                     order: (V, V) -> Int) -> [E] {
        objects.sorted { a, b in
            switch (value(a), value(b)) {
            case (nil, nil): return id(a) < id(b)
            case (nil, _): return true
            case (_, nil): return false
            case (let x?, let y?):
                let o = order(x, y)
                return o == 0 ? id(a) < id(b) : descending ? o > 0 : o < 0
            }
        }
    }
}
