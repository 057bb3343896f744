import BenchSupport
import Foundation

/// The embedded-object benchmark's data, lookups, changes and expected answers for N orders, built
/// before any timer.
///
/// Order i (1...N), drawn from SplitMix64 seeded with 7: a customer `customer%05d` (10,000 of
/// them), a created date in 2026 (whole milliseconds), and 0 to 6 lines (uniform: 3 on average).
/// A line: a sku `SKU-%04d` out of 1,000, a quantity 1...6, a price of 1.00 to 999.99 (whole
/// cents), and on one line in five a ship-to address (one of 20 cities, a five-digit zip).
struct Workload {
    static let customers = 10_000
    static let distinctSkus = 1_000
    static let maxLines = 6
    static let maxQuantity = 6
    /// The `any` step's second condition: `quantity >= minQuantity` on the same line.
    static let minQuantity = 3
    /// Lookups of each query step.
    static let lookups = 100
    static let cities = ["Amsterdam", "Athens", "Berlin", "Bern", "Bratislava", "Brussels", "Budapest", "Copenhagen",
                         "Dublin", "Helsinki", "Lisbon", "Ljubljana", "London", "Madrid", "Oslo", "Paris", "Prague",
                         "Riga", "Rome", "Vienna"]

    let n: Int
    /// Orders 1...N as the app holds them before the insert (id 0); order i at index i − 1.
    let orders: [Order]
    /// The get step's order: the CRUD workload's SplitMix64 permutation of 1...N.
    let permutation: [UInt64]
    /// The skus the two query steps look up (100, seeded).
    let lookupSkus: [String]
    /// The update step's orders: a tenth of them (seeded), with their ids and new lines.
    let updates: [Order]
    /// The remove step's ids: another tenth (seeded; some were updated).
    let removals: [UInt64]
    /// What the store holds after the remove step, by id.
    let final: [Order]

    /// The sku numbered `k`: `SKU-%04d`.
    static func sku(_ k: Int) -> String { "SKU-" + digits(k, 4) }

    /// `k` in `width` digits, zero-padded.
    static func digits(_ k: Int, _ width: Int) -> String {
        let s = String(k)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// An order's lines, drawn from `random` (0 to 6 of them).
    static func lines(_ random: inout SplitMix64) -> [OrderLine] {
        (0..<Int(random.next() % UInt64(maxLines + 1))).map { _ in
            let sku = sku(Int(random.next() % UInt64(distinctSkus)))
            let quantity = 1 + Int(random.next() % UInt64(maxQuantity))
            let price = Double(100 + random.next() % 99_900) / 100
            let shipTo = random.next() % 5 == 0
                ? ShipTo(city: cities[Int(random.next() % UInt64(cities.count))], zip: digits(10_000 + Int(random.next() % 90_000), 5))
                : nil
            return OrderLine(sku: sku, quantity: quantity, price: price, shipTo: shipTo)
        }
    }

    /// 1...N shuffled (Fisher–Yates from the end with SplitMix64 seeded with `seed`).
    static func shuffled(_ n: Int, seed: UInt64) -> [UInt64] {
        var perm = (1...n).map(UInt64.init)
        var random = SplitMix64(state: seed)
        for k in stride(from: n - 1, through: 1, by: -1) { perm.swapAt(k, Int(random.next() % UInt64(k + 1))) }
        return perm
    }

    /// How many orders the update and remove steps change: a tenth, at least one.
    var changed: Int { max(1, n / 10) }

    init(n: Int) {
        self.n = n
        var random = SplitMix64(state: 7)
        let year = 365 * 86_400 * 1_000 as UInt64
        let start = 1_767_225_600_000 as UInt64  // 2026-01-01T00:00:00Z in milliseconds
        orders = (1...n).map { _ in
            let customer = "customer" + Self.digits(Int(random.next() % UInt64(Self.customers)), 5)
            let created = Date(timeIntervalSince1970: Double(start + random.next() % year) / 1_000)
            return Order(id: 0, customer: customer, created: created, lines: Self.lines(&random))
        }
        permutation = randomOrder(n)
        var lookups = SplitMix64(state: 11)
        lookupSkus = (0..<Self.lookups).map { _ in Self.sku(Int(lookups.next() % UInt64(Self.distinctSkus))) }

        var current = orders.enumerated().map { k, order in
            var stored = order
            stored.id = UInt64(k + 1)
            return stored
        }
        let count = max(1, n / 10)
        var newLines = SplitMix64(state: 19)
        updates = Self.shuffled(n, seed: 13).prefix(count).map { id in
            var order = current[Int(id) - 1]
            order.lines = Self.lines(&newLines)
            return order
        }
        for order in updates { current[Int(order.id) - 1] = order }
        removals = Array(Self.shuffled(n, seed: 17).prefix(count)).sorted()
        let removed = Set(removals)
        final = current.filter { !removed.contains($0.id) }
    }

    /// Orders 1...N as stored after the insert (ids set).
    var inserted: [Order] {
        orders.enumerated().map { k, order in
            var stored = order
            stored.id = UInt64(k + 1)
            return stored
        }
    }

    /// The ids, ascending, of the orders among `orders` that have a line meeting `line`, for each lookup sku.
    func expectedIds(_ orders: [Order], _ line: (OrderLine, String) -> Bool) -> [[Int64]] {
        var ids: [String: [Int64]] = [:]
        for sku in lookupSkus { ids[sku] = [] }
        for order in orders {
            for sku in Set(order.lines.map(\.sku)) where ids[sku] != nil && order.lines.contains(where: { line($0, sku) }) {
                ids[sku]!.append(Int64(order.id))
            }
        }
        return lookupSkus.map { ids[$0]! }
    }

    /// `Order.lines.sku == X`.
    static func hasSku(_ line: OrderLine, _ sku: String) -> Bool { line.sku == sku }

    /// `Order.lines.any { OrderLine.sku == X && OrderLine.quantity >= 3 }`.
    static func hasSkuAndQuantity(_ line: OrderLine, _ sku: String) -> Bool { line.sku == sku && line.quantity >= minQuantity }

    /// The totals of `orders` as the checks compare them.
    static func totals(_ orders: [Order]) -> Totals {
        var totals = Totals()
        for order in orders { totals.add(order) }
        return totals
    }
}
