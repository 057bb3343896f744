/// Counts and sums over a set of orders: what the engines' answers are compared by.
struct Totals: Equatable, CustomStringConvertible {
    var orders = 0
    var lines = 0
    var quantity = 0
    /// Prices summed in whole cents (exact whatever the order of the sum).
    var cents = 0
    var shipTos = 0

    mutating func add(_ order: Order) {
        orders += 1
        lines += order.lines.count
        for line in order.lines {
            quantity += line.quantity
            cents += Int((line.price * 100).rounded())
            shipTos += line.shipTo == nil ? 0 : 1
        }
    }

    var description: String { "\(orders) orders, \(lines) lines, quantity \(quantity), \(cents) cents, \(shipTos) ship-tos" }
}
